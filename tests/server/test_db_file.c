/*
 * test_db_file.c: the database's files (db/file.c) through db_open() and
 * db_health(): which open modes create, refuse or replace what is on
 * disk; the lock that keeps a second opener off; the modes of the files
 * created; a file removed or replaced under an open database.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "db.h"

struct fixture {
    char dir[64];
    char path[128];
};

static void path_of(const struct fixture *f, const char *suffix, char *out, size_t len)
{
    snprintf(out, len, "%s%s", f->path, suffix);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/allot-test-dbfile-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".lock", ".moved"};
    struct fixture *f = *state;
    char p[160];
    size_t i;

    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        path_of(f, suffixes[i], p, sizeof(p));
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

static int mode_of(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? (int)(sb.st_mode & 0777) : -1;
}

/* A pool insert: the smallest write. */
static int write_something(struct db *db, const char *name)
{
    struct db_pool p;

    memset(&p, 0, sizeof(p));
    snprintf(p.name, sizeof(p.name), "%s", name);
    snprintf(p.label_key, sizeof(p.label_key), "k");
    snprintf(p.label_value, sizeof(p.label_value), "%s", name);
    return db_pool_insert(db, &p);
}

enum before { NOTHING, EMPTY_FILE, DATABASE };

static void prepare(const struct fixture *f, int before)
{
    struct db *db = NULL;
    FILE *fp;

    if (before == EMPTY_FILE) {
        fp = fopen(f->path, "w");
        assert_non_null(fp);
        fclose(fp);
    } else if (before == DATABASE) {
        assert_int_equal(db_open(f->path, DB_OPEN_CREATE, &db), DB_OK);
        assert_int_equal(write_something(db, "old"), DB_OK);
        db_close(db);
    }
}

static void test_open_modes(void **state)
{
    static const struct {
        int mode, before;
        int rc;
        int exists_after;       /* the database file is there afterwards */
        int keeps_old;          /* the pool written before is still there */
    } cases[] = {
        {DB_OPEN_EXISTING, NOTHING, DB_ENOTFOUND, 0, 0},
        {DB_OPEN_EXISTING, EMPTY_FILE, DB_ENOTFOUND, 1, 0},
        {DB_OPEN_EXISTING, DATABASE, DB_OK, 1, 1},
        {DB_OPEN_CREATE, NOTHING, DB_OK, 1, 0},
        {DB_OPEN_CREATE, EMPTY_FILE, DB_ECONFLICT, 1, 0},
        {DB_OPEN_CREATE, DATABASE, DB_ECONFLICT, 1, 1},
        {DB_OPEN_FRESH, NOTHING, DB_OK, 1, 0},
        {DB_OPEN_FRESH, DATABASE, DB_OK, 1, 0},
    };
    struct fixture *f = *state;
    struct db_pool p;
    struct db *db;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char wal[160], shm[160];
        db = NULL;
        path_of(f, "-wal", wal, sizeof(wal));
        path_of(f, "-shm", shm, sizeof(shm));
        unlink(f->path);
        unlink(wal);
        unlink(shm);
        prepare(f, cases[i].before);
        assert_int_equal(db_open(f->path, cases[i].mode, &db), cases[i].rc);
        assert_int_equal(access(f->path, F_OK) == 0, cases[i].exists_after);
        if (db) {
            assert_int_equal(db_pool_by_name(db, "old", &p) == DB_OK, cases[i].keeps_old);
            db_close(db);
        } else {
            assert_null(db);
        }
        if (cases[i].keeps_old && cases[i].rc != DB_OK) {
            assert_int_equal(db_open(f->path, DB_OPEN_EXISTING, &db), DB_OK);
            assert_int_equal(db_pool_by_name(db, "old", &p), DB_OK);
            db_close(db);
        }
    }
}

static void test_one_opener(void **state)
{
    struct fixture *f = *state;
    struct db *a = NULL, *b = NULL;

    assert_int_equal(db_open(f->path, DB_OPEN_CREATE, &a), DB_OK);
    assert_int_equal(db_open(f->path, DB_OPEN_EXISTING, &b), DB_EBUSY);
    assert_null(b);
    /* a fresh open would remove the database from under the first */
    assert_int_equal(db_open(f->path, DB_OPEN_FRESH, &b), DB_EBUSY);
    assert_int_equal(write_something(a, "still-mine"), DB_OK);
    db_close(a);
    assert_int_equal(db_open(f->path, DB_OPEN_EXISTING, &b), DB_OK);
    db_close(b);
}

static void test_owner_only(void **state)
{
    struct fixture *f = *state;
    char wal[160], shm[160];
    struct db *db = NULL;
    mode_t old = umask(022);

    path_of(f, "-wal", wal, sizeof(wal));
    path_of(f, "-shm", shm, sizeof(shm));
    assert_int_equal(db_open(f->path, DB_OPEN_CREATE, &db), DB_OK);
    assert_int_equal(write_something(db, "x"), DB_OK);
    assert_int_equal(mode_of(f->path), 0600);
    assert_int_equal(mode_of(wal), 0600);
    assert_int_equal(mode_of(shm), 0600);
    db_close(db);
    umask(old);
}

static void test_health_and_settings(void **state)
{
    struct fixture *f = *state;
    struct db *db = NULL;
    char msg[256];

    assert_int_equal(db_open(f->path, DB_OPEN_CREATE, &db), DB_OK);
    assert_int_equal(db_health(db, msg, sizeof(msg)), DB_OK);
    assert_string_equal(msg, "");
    assert_non_null(strstr(db_describe(db), "journal_mode=wal"));
    assert_non_null(strstr(db_describe(db), "synchronous=FULL"));
    db_close(db);
}

static void test_removed_file(void **state)
{
    struct fixture *f = *state;
    struct db *db = NULL;
    struct db_pool p;
    char moved[160], msg[256];

    path_of(f, ".moved", moved, sizeof(moved));
    assert_int_equal(db_open(f->path, DB_OPEN_CREATE, &db), DB_OK);
    assert_int_equal(write_something(db, "before"), DB_OK);
    assert_int_equal(rename(f->path, moved), 0);
    /* the write is refused, not acknowledged into a file nobody will find */
    assert_int_equal(write_something(db, "after"), DB_EGONE);
    assert_int_equal(db_health(db, msg, sizeof(msg)), DB_EGONE);
    assert_non_null(strstr(msg, "removed or replaced"));
    /* final: putting a file back does not make writes safe again */
    assert_int_equal(rename(moved, f->path), 0);
    assert_int_equal(db_health(db, msg, sizeof(msg)), DB_EGONE);
    assert_int_equal(write_something(db, "later"), DB_EGONE);
    assert_int_equal(db_pool_by_name(db, "before", &p), DB_OK); /* reads go on */
    db_close(db);
    assert_int_equal(db_open(f->path, DB_OPEN_EXISTING, &db), DB_OK);
    assert_int_equal(db_pool_by_name(db, "after", &p), DB_ENOTFOUND);
    db_close(db);
}

/* Each test on a fresh fixture: setup before, teardown after. */
#define FILE_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

RUN_TESTS(
    FILE_TEST(test_open_modes),
    FILE_TEST(test_one_opener),
    FILE_TEST(test_owner_only),
    FILE_TEST(test_health_and_settings),
    FILE_TEST(test_removed_file)
)
