/*
 * test_audit.c: the audit log's recording side (api/audit.c) on a real
 * SQLite file whose write lock another connection holds for a while (the
 * writer's transaction waits for it, as for any process holding it):
 *   - a batch being written holds no room of the queue (invariant 4): once
 *     the thread has taken half a queue's notes as its batch, a whole
 *     queue's worth more are noted without waiting for that batch;
 *   - no note is lost (invariant 1): once the lock is let go, every note
 *     is a row, each with its own id.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cmocka_main.h"
#include "test_clock.h"
#include "api.h"
#include "db_audit.h"
#include "tmpdb.h"

enum {
    QUEUE = 4096,          /* api/audit.c's AUDIT_QUEUE */
    TAKEN_MS = 1000,       /* the thread takes a half-full queue at once; its period is 200 ms */
    HOLD_MS = 3000,        /* the write lock held this long (the writer waits up to 5 s) */
    NOTED_WITHIN_MS = 1000 /* a queue's notes, while the batch waits for the lock */
};

/* Holds the database's write lock from another connection for HOLD_MS. */
struct holder {
    const char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int held;
};

static void *hold_main(void *arg)
{
    struct holder *h = arg;
    sqlite3 *c = NULL;
    int ok = sqlite3_open(h->path, &c) == SQLITE_OK &&
             sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;

    pthread_mutex_lock(&h->mu);
    h->held = ok ? 1 : -1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    if (ok) {
        test_sleep_ms(HOLD_MS);
        sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close(c);
    return NULL;
}

static void note_many(struct api_req *r, const struct api_route *rt, int n)
{
    int i;

    for (i = 0; i < n; i++)
        api_audit_note(r, rt);
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct db_audit *)a)->id, ((const struct db_audit *)b)->id);
}

static void test_batch_holds_no_room(void **state)
{
    static const struct api_route rt = {"POST", "/api/v1/workloads/trainings", NULL, API_AUTH, 0};
    struct holder h = {NULL, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    struct tmpdb t;
    struct api_app app;
    struct api_req r;
    struct db_audit *rows = NULL;
    pthread_t holder;
    int64_t t0, noted_ms;
    int n = 0, truncated = 0, i;

    (void)state;
    assert_int_equal(tmpdb_open("audit", 0, &t), 0);
    memset(&app, 0, sizeof(app));
    memset(&r, 0, sizeof(r));
    assert_non_null(app.audit = api_audit_start(t.db, 0));
    r.app = &app;
    r.method = "POST";
    r.path = "/api/v1/workloads/trainings";
    r.remote = "127.0.0.1";
    r.status = 202;
    strcpy(r.subject, "admin");

    h.path = t.path;
    assert_int_equal(pthread_create(&holder, NULL, hold_main, &h), 0);
    pthread_mutex_lock(&h.mu);
    while (!h.held)
        pthread_cond_wait(&h.cv, &h.mu);
    pthread_mutex_unlock(&h.mu);
    assert_int_equal(h.held, 1);

    note_many(&r, &rt, QUEUE / 2); /* half full: the thread takes them, and waits for the lock */
    test_sleep_ms(TAKEN_MS);
    t0 = test_mono_ms();
    note_many(&r, &rt, QUEUE);
    noted_ms = test_mono_ms() - t0;
    assert_int_equal(pthread_join(holder, NULL), 0);
    api_audit_stop(app.audit); /* writes what is left */
    assert_true(noted_ms < NOTED_WITHIN_MS); /* the batch held room: they waited for the lock */

    assert_int_equal(db_audit_list(t.db, 0, INT64_MAX, 2 * QUEUE, &rows, &n, &truncated), DB_OK);
    assert_int_equal(n, QUEUE / 2 + QUEUE);
    qsort(rows, (size_t)n, sizeof(*rows), by_id);
    for (i = 0; i < n; i++) {
        assert_string_equal(rows[i].method, "POST");
        assert_int_equal(rows[i].status, 202);
        assert_true(i == 0 || strcmp(rows[i].id, rows[i - 1].id) != 0); /* each its own */
    }
    free(rows);
    tmpdb_remove(&t);
}

RUN_TESTS(cmocka_unit_test(test_batch_holds_no_room))
