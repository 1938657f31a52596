/*
 * test_db.c: storage: migrations, group commit under concurrent writers,
 * the workload lifecycle, list filters and paging at every offset, and
 * cycle application that skips workloads changed since the snapshot; pool
 * settings and deletion, the scheduler's partial reads (topology, named
 * workloads), batched actions, the allocation samples, the metrics
 * series and the audit log's retention; ids (version 7, distinct, a
 * forked child's its own). Each test uses its own temporary database
 * file, or with ALLOT_TEST_DB_URI (pg/test_db, tests/pg/run_pg.sh) a fresh
 * schema in that PostgreSQL database.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "db.h"
#include "db_audit.h"
#include "db_int.h"
#include "tmpdb.h"

struct fixture {
    struct tmpdb tmp;             /* first: tmpdb_teardown frees the fixture */
    struct db_pool pool;
    struct db_queue dept, proj;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    /* on PostgreSQL (pg/test_db), a fresh schema in its database per test */
    if (!f || tmpdb_open("db", 1, &f->tmp) != 0 ||
        tmpdb_org(f->tmp.db, 2000, &f->pool, &f->dept, &f->proj) != DB_OK)
        return -1;
    *state = f;
    return 0;
}

/* *w: workload NAME of one pod in the fixture's project, class train,
 * submitted by USER; nothing else set. */
static void wl_init(const struct fixture *f, const char *name, const char *user,
                    struct db_workload *w)
{
    memset(w, 0, sizeof(*w));
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->project_seq = f->proj.seq;
    strcpy(w->priority_class, "train");
    w->n_pods = w->min_pods = 1;
    snprintf(w->created_by, sizeof(w->created_by), "%s", user);
}

static int submit_priority(struct fixture *f, const char *name, int gpus, int priority,
                           struct db_workload *w)
{
    wl_init(f, name, "tester", w);
    w->type = DB_TRAINING;
    w->priority = priority;
    w->preemptible = 1;
    w->gpu_devices = gpus;
    return db_workload_insert(f->tmp.db, w);
}

/* node-1: 2 GPUs in the fixture's pool, ready. */
static void node_add(struct fixture *f, struct db_node *node)
{
    memset(node, 0, sizeof(*node));
    strcpy(node->name, "node-1");
    node->pool_seq = f->pool.seq;
    node->n_gpus = 2;
    node->ready = 1;
    assert_int_equal(db_node_upsert(f->tmp.db, node), DB_OK);
}

static int submit(struct fixture *f, const char *name, int gpus, struct db_workload *w)
{
    return submit_priority(f, name, gpus, 50, w);
}

/* Caps on pending work: 3 Pending workloads in the project, 2 a user.
 * Each step submits as a user and wants a result; a refusal stores
 * nothing and says which cap. */
static void test_pending_caps(void **state)
{
    static const struct {
        const char *user, *name;
        int want;
        const char *why;          /* a word of the refusal */
    } steps[] = {
        {"u1", "w1", DB_OK, NULL},
        {"u1", "w2", DB_OK, NULL},
        {"u1", "w3", DB_ELIMIT, "max-pending-per-user"},
        {"u2", "w4", DB_OK, NULL},
        {"u2", "w5", DB_ELIMIT, "max-pending-per-project"},
    };
    static const struct db_pending_caps caps = {3, 2}, none = {0, 0};
    struct fixture *f = *state;
    struct db_workload w, got;
    char why[DB_MSG_LEN];
    int64_t first_seq = 0;
    size_t i;

    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        memset(&got, 0, sizeof(got));
        wl_init(f, steps[i].name, steps[i].user, &w);
        strcpy(w.project_name, "team");
        w.priority = 50;
        if (db_workload_submit(f->tmp.db, &w, &caps, why, sizeof(why)) != steps[i].want ||
            (steps[i].why && !strstr(why, steps[i].why)))
            fail_msg("%s by %s: not %d (%s)", steps[i].name, steps[i].user, steps[i].want, why);
        if (steps[i].want != DB_OK)
            assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_ENOTFOUND);
        if (steps[i].want == DB_OK)
            first_seq = first_seq ? first_seq : w.seq;
        db_workload_clear(&w);
        db_workload_clear(&got);
    }
    /* a deleted workload is no longer Pending: room for one more */
    assert_int_equal(db_workload_act(f->tmp.db, first_seq, DB_WL_DELETE, "u1", 1), DB_OK);
    wl_init(f, "w6", "u2", &w);
    assert_int_equal(db_workload_submit(f->tmp.db, &w, &caps, why, sizeof(why)), DB_OK);
    db_workload_clear(&w);
    /* no caps: anything goes */
    strcpy(w.name, "w7");
    assert_int_equal(db_workload_submit(f->tmp.db, &w, &none, why, sizeof(why)), DB_OK);
    db_workload_clear(&w);
}

/* A batch and a resume count against the caps as single submissions do:
 * 4 Pending in the project, 3 a user. A batch that would pass a cap is
 * refused whole; a resume (Stopped -> Pending) is refused while the
 * project is full, single and in db_workload_act_many, and a refusal
 * leaves the workload Stopped. */
static void test_pending_caps_batch_resume(void **state)
{
    static const struct db_pending_caps caps = {4, 3};
    struct fixture *f = *state;
    struct db_workload ws[3], w, got;
    char why[DB_MSG_LEN], name[16];
    int64_t seq;
    int i, rc1;

    for (i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "b-%d", i);
        wl_init(f, name, "u1", &ws[i]);
    }
    /* 3 of u1's at once: within both caps */
    assert_int_equal(db_workloads_submit(f->tmp.db, ws, 3, &caps, why, sizeof(why)), DB_OK);
    seq = ws[0].seq;
    for (i = 0; i < 3; i++)
        db_workload_clear(&ws[i]);
    /* u2's 2 more would make 5 in the project: none stored */
    for (i = 0; i < 2; i++) {
        snprintf(name, sizeof(name), "c-%d", i);
        wl_init(f, name, "u2", &ws[i]);
    }
    assert_int_equal(db_workloads_submit(f->tmp.db, ws, 2, &caps, why, sizeof(why)), DB_ELIMIT);
    assert_non_null(strstr(why, "max-pending-per-project"));
    assert_non_null(strstr(why, "2 more"));
    assert_int_equal(db_workload_get(f->tmp.db, ws[0].id, &got), DB_ENOTFOUND);
    assert_int_equal(db_workload_get(f->tmp.db, ws[1].id, &got), DB_ENOTFOUND);
    /* one of them fits */
    assert_int_equal(db_workloads_submit(f->tmp.db, ws, 1, &caps, why, sizeof(why)), DB_OK);
    db_workload_clear(&ws[0]);
    db_workload_clear(&ws[1]);
    /* a mixed batch is refused under caps */
    memset(ws, 0, sizeof(ws));
    strcpy(ws[0].created_by, "u1");
    strcpy(ws[1].created_by, "u2");
    ws[0].project_seq = ws[1].project_seq = f->proj.seq;
    assert_int_equal(db_workloads_submit(f->tmp.db, ws, 2, &caps, why, sizeof(why)), DB_EINVAL);

    /* suspend one of u1's (3 Pending left), fill the project, resume it */
    assert_int_equal(db_workload_act(f->tmp.db, seq, DB_WL_SUSPEND, "u1", 1), DB_OK);
    wl_init(f, "d", "u3", &w);
    assert_int_equal(db_workload_submit(f->tmp.db, &w, &caps, why, sizeof(why)), DB_OK);
    assert_int_equal(db_workload_resume(f->tmp.db, seq, "u1", 2, &caps, why, sizeof(why)), DB_ELIMIT);
    assert_non_null(strstr(why, "project team-a has 4 pending workloads"));
    assert_int_equal(db_workload_act_many(f->tmp.db, &seq, 1, DB_WL_RESUME, "u1", 2, &caps, &rc1),
                     DB_OK);
    assert_int_equal(rc1, DB_ELIMIT);
    assert_int_equal(db_workload_get_seq(f->tmp.db, seq, &got), DB_OK);
    assert_string_equal(got.phase, "Stopped");
    db_workload_clear(&got);
    /* room again: the resume goes through */
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_DELETE, "u3", 3), DB_OK);
    assert_int_equal(db_workload_resume(f->tmp.db, seq, "u1", 4, &caps, why, sizeof(why)), DB_OK);
    assert_int_equal(db_workload_get_seq(f->tmp.db, seq, &got), DB_OK);
    assert_string_equal(got.phase, "Pending");
    db_workload_clear(&got);
    db_workload_clear(&w);
}

/* What db_on_submitted()'s hook heard: the seqs, in order. */
struct heard {
    int64_t seqs[8];
    int n;
};

static void hear(void *arg, int64_t seq)
{
    struct heard *h = arg;

    if (h->n < 8)
        h->seqs[h->n] = seq;
    h->n++;
}

/* The writer tells the hook of every workload a submission stored, once
 * its commit returned and before the submitter is answered; a refused or
 * failed submission, and any after the hook is removed, tells nothing. */
static void test_submitted_hook(void **state)
{
    static const struct db_pending_caps caps = {3, 0};
    struct fixture *f = *state;
    struct heard h = {{0}, 0};
    struct db_workload ws[3];
    char why[DB_MSG_LEN], name[16];
    int i;

    db_on_submitted(f->tmp.db, hear, &h);
    for (i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "h-%d", i);
        wl_init(f, name, "u1", &ws[i]);
    }
    assert_int_equal(db_workloads_submit(f->tmp.db, ws, 2, &caps, why, sizeof(why)), DB_OK);
    assert_int_equal(h.n, 2);
    assert_true(h.seqs[0] == ws[0].seq && h.seqs[1] == ws[1].seq && ws[0].seq != ws[1].seq);
    assert_int_equal(db_workload_insert(f->tmp.db, &ws[2]), DB_OK);
    assert_int_equal(h.n, 3);
    assert_true(h.seqs[2] == ws[2].seq);
    /* past the project's cap of 3 Pending: refused, nothing heard */
    wl_init(f, "h-3", "u1", &ws[0]);
    assert_int_equal(db_workload_submit(f->tmp.db, &ws[0], &caps, why, sizeof(why)), DB_ELIMIT);
    /* a name taken: nothing stored, nothing heard */
    wl_init(f, "h-2", "u1", &ws[0]);
    assert_int_equal(db_workload_insert(f->tmp.db, &ws[0]), DB_ECONFLICT);
    assert_int_equal(h.n, 3);
    db_on_submitted(f->tmp.db, NULL, NULL);
    wl_init(f, "h-4", "u1", &ws[0]);
    assert_int_equal(db_workload_insert(f->tmp.db, &ws[0]), DB_OK);
    assert_int_equal(h.n, 3);
    for (i = 0; i < 3; i++)
        db_workload_clear(&ws[i]);
}

/* An audit batch lands whole, however many turns it takes on SQLite; the
 * same batch written again (a retry after a failure part way) adds
 * nothing, and a retry with rows of its own adds just those. */
static void test_audit_batch_again(void **state)
{
    enum { N = 3000 };
    struct fixture *f = *state;
    struct db_audit *rows = calloc(N + 1, sizeof(*rows)), *got = NULL;
    int i, n = 0, truncated = 0;

    assert_non_null(rows);
    for (i = 0; i < N + 1; i++) {
        snprintf(rows[i].id, sizeof(rows[i].id), "audit-%d", i);
        rows[i].at_ms = 1000 + i;
        snprintf(rows[i].url, sizeof(rows[i].url), "/api/v1/workloads/trainings");
        rows[i].status = 202;
    }
    assert_int_equal(db_audit_insert(f->tmp.db, rows, N, 0), DB_OK);
    assert_int_equal(db_audit_insert(f->tmp.db, rows, N + 1, 0), DB_OK);
    assert_int_equal(db_audit_list(f->tmp.db, 0, 1000000, N + 10, &got, &n, &truncated), DB_OK);
    assert_int_equal(n, N + 1);
    assert_false(truncated);
    for (i = 0; i < n; i++)
        assert_int_equal(got[i].at_ms, 1000 + i);
    free(got);
    free(rows);
}

/* A respec (an inference's PATCH) makes a running workload Pending again,
 * so it counts against the caps as a resume does: with 1 Pending allowed in
 * the project and one Pending already there, respecifying the running
 * workload is refused and leaves it running; respecifying the Pending one
 * is not a new Pending workload; once there is room the running one goes
 * back to Pending with its new spec. */
static void test_pending_caps_respec(void **state)
{
    static const struct db_pending_caps caps = {1, 0};
    struct fixture *f = *state;
    struct db_node node;
    struct db_workload run, wait, got;
    struct db_snapshot *s = NULL;
    struct db_sched_pod pod;
    struct db_wl_update up;
    struct db_cycle cy;
    char why[DB_MSG_LEN] = "";
    struct db_wl_respec u = {0, "img:2", "{}", 1, 1, "tester", 20, &caps, why, sizeof(why)};
    int applied = -1;

    node_add(f, &node);
    assert_int_equal(submit(f, "run", 1, &run), DB_OK);
    assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
    pod.node_seq = node.seq;
    pod.devices = 1;
    memset(&up, 0, sizeof(up));
    up.seq = run.seq;
    up.version = s->workloads[0].version;
    up.phase = "Running";
    up.phase_reason = up.phase_message = "";
    up.pods_changed = 1;
    up.pods = &pod;
    up.n_pods = 1;
    cy = (struct db_cycle){.now_ms = 10, .updates = &up, .n_updates = 1};
    assert_int_equal(db_cycle_apply(f->tmp.db, &cy, &applied), DB_OK);
    assert_int_equal(applied, 1);
    db_snapshot_free(s);
    assert_int_equal(submit(f, "wait", 1, &wait), DB_OK);

    u.seq = run.seq;
    assert_int_equal(db_workload_respec(f->tmp.db, &u), DB_ELIMIT);
    assert_non_null(strstr(why, "max-pending-per-project"));
    assert_int_equal(db_workload_get(f->tmp.db, run.id, &got), DB_OK);
    assert_string_equal(got.phase, "Running");
    assert_int_equal(got.running_pods, 1);
    db_workload_clear(&got);
    u.seq = wait.seq;
    assert_int_equal(db_workload_respec(f->tmp.db, &u), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, wait.seq, DB_WL_DELETE, "tester", 30), DB_OK);
    u.seq = run.seq;
    assert_int_equal(db_workload_respec(f->tmp.db, &u), DB_OK);
    assert_int_equal(db_workload_get(f->tmp.db, run.id, &got), DB_OK);
    assert_string_equal(got.phase, "Pending");
    assert_string_equal(got.image, "img:2");
    db_workload_clear(&got);
    db_workload_clear(&run);
    db_workload_clear(&wait);
}

/* Refresh-token families: each generation is exchanged once; an older
 * one presented again revokes the family; a logout revokes them all. */
static void test_refresh_families(void **state)
{
    struct fixture *f = *state;
    char a[DB_ID_LEN], b[DB_ID_LEN], old[DB_ID_LEN];

    assert_int_equal(db_refresh_start(f->tmp.db, 7, 1000, 10, a), DB_OK);
    assert_int_equal(db_refresh_start(f->tmp.db, 7, 1000, 10, b), DB_OK);
    assert_string_not_equal(a, b);
    assert_int_equal(db_refresh_rotate(f->tmp.db, a, 7, 1, 2000, 20), DB_OK);
    assert_int_equal(db_refresh_rotate(f->tmp.db, a, 7, 2, 2000, 30), DB_OK);
    assert_int_equal(db_refresh_rotate(f->tmp.db, a, 8, 3, 2000, 30), DB_ENOTFOUND); /* not 8's */
    /* generation 2 again: reuse, and the family is gone for generation 3 too */
    assert_int_equal(db_refresh_rotate(f->tmp.db, a, 7, 2, 2000, 40), DB_ECONFLICT);
    assert_int_equal(db_refresh_rotate(f->tmp.db, a, 7, 3, 2000, 40), DB_ENOTFOUND);
    /* b is another sign-in: untouched, until it expires */
    assert_int_equal(db_refresh_rotate(f->tmp.db, b, 7, 1, 1500, 50), DB_OK);
    assert_int_equal(db_refresh_rotate(f->tmp.db, b, 7, 2, 1500, 1600), DB_ENOTFOUND);
    /* an expired family is removed when another starts; a logout revokes */
    snprintf(old, sizeof(old), "%s", b);
    assert_int_equal(db_refresh_start(f->tmp.db, 7, 5000, 1700, a), DB_OK);
    assert_int_equal(db_refresh_start(f->tmp.db, 9, 5000, 1700, b), DB_OK);
    assert_int_equal(db_refresh_revoke_user(f->tmp.db, 7), DB_OK);
    assert_int_equal(db_refresh_rotate(f->tmp.db, a, 7, 1, 5000, 1800), DB_ENOTFOUND);
    assert_int_equal(db_refresh_rotate(f->tmp.db, b, 9, 1, 5000, 1800), DB_OK);
    assert_int_equal(db_refresh_rotate(f->tmp.db, old, 7, 2, 5000, 10), DB_ENOTFOUND);
}

/* principal: a row of kind with login and name (owner: an access key's). */
static int64_t principal(struct db *db, int kind, const char *login, const char *name,
                         int64_t owner, int want)
{
    struct db_user u;

    memset(&u, 0, sizeof(u));
    u.kind = kind;
    u.owner_id = owner;
    snprintf(u.login, sizeof(u.login), "%s", login);
    snprintf(u.name, sizeof(u.name), "%s", name);
    snprintf(u.secret_hash, sizeof(u.secret_hash), "$y$x");
    assert_int_equal(db_user_insert(db, &u), want);
    return u.id;
}

/* Access keys: a name unique per owner, listed apart from the service
 * accounts, per owner or all, and deleted with their owner. */
static void test_access_keys(void **state)
{
    struct fixture *f = *state;
    struct db *db = f->tmp.db;
    struct db_user *us = NULL, u;
    int64_t kim = principal(db, DB_USER, "kim", "kim", 0, DB_OK);
    int64_t lee = principal(db, DB_USER, "lee", "lee", 0, DB_OK);
    int64_t k1 = principal(db, DB_SERVICE_ACCOUNT, "ci-1", "ci", kim, DB_OK);
    int n = 0;

    principal(db, DB_SERVICE_ACCOUNT, "ci-2", "ci", kim, DB_ECONFLICT); /* kim's "ci" again */
    principal(db, DB_SERVICE_ACCOUNT, "ci-3", "ci", lee, DB_OK);        /* lee's own "ci" */
    principal(db, DB_SERVICE_ACCOUNT, "sa-1", "ci", 0, DB_OK);          /* a service account */
    assert_int_equal(db_key_list(db, kim, &us, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(us[0].id, k1);
    assert_int_equal(us[0].owner_id, kim);
    free(us);
    us = NULL;
    assert_int_equal(db_key_list(db, 0, &us, &n), DB_OK);
    assert_int_equal(n, 2);
    free(us);
    us = NULL;
    assert_int_equal(db_user_list(db, DB_SERVICE_ACCOUNT, &us, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(us[0].login, "sa-1");
    free(us);
    us = NULL;
    assert_int_equal(db_user_delete(db, kim), DB_OK);
    assert_int_equal(db_user_get(db, k1, &u), DB_ENOTFOUND);
    assert_int_equal(db_key_list(db, 0, &us, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(us[0].owner_id, lee);
    free(us);
}

/* Migration 390's rewrite: a CHECK's list of three constants or more
 * becomes comparisons; anything else stays as it was. */
static void test_in_lists_flattened(void **state)
{
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"CHECK (kind IN (0, 1, 2, 3))", "CHECK ((kind = 0 OR kind = 1 OR kind = 2 OR kind = 3))"},
        {"CHECK (flag IN (0, 1))", NULL},                       /* two: SQLite compares them */
        {"CHECK (p IN ('a', 'b''c', 'd)'))", "CHECK ((p = 'a' OR p = 'b''c' OR p = 'd)'))"},
        {"CHECK (t IN ('x', 'y', 'z') AND s IN ('u', 'v', 'w'))",
         "CHECK ((t = 'x' OR t = 'y' OR t = 'z') AND (s = 'u' OR s = 'v' OR s = 'w'))"},
        {"CHECK (old.n IN (-1, 0, 7))", "CHECK ((old.n = -1 OR old.n = 0 OR old.n = 7))"},
        {"CHECK (p NOT IN ('a', 'b', 'c'))", NULL},             /* NOT IN left alone */
        {"CHECK (p IN (SELECT x FROM t))", NULL},               /* not constants */
        {"CHECK (p IN (a, b, c))", NULL},                       /* names, not constants */
        {"CHECK ((a + b) IN (1, 2, 3))", NULL},                 /* no name before IN */
        {"CHECK (p IN ('a', 'b', 'c'", NULL},                   /* no end */
        {"CREATE TABLE t (a INTEGER)", NULL},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int changed = -1;
        char *got = db__in_lists_flattened(cases[i].sql, &changed);
        const char *want = cases[i].want ? cases[i].want : cases[i].sql;

        assert_non_null(got);
        if (strcmp(got, want) != 0 || changed != (cases[i].want != NULL))
            fail_msg("%s: got %s (changed %d)", cases[i].sql, got, changed);
        free(got);
    }
}

/* The schema's CHECK constraints refuse out-of-range rows whatever the
 * caller let through: DB_EINVAL, and nothing is written. */
static void test_checks(void **state)
{
    static const struct {
        const char *what;
        int64_t cpu_milli, mem_mib;
        int priority, gpu_devices, preemptible;
    } bad[] = {
        {"memory parsed from nan", 0, INT64_MIN, 50, 1, 1},
        {"negative memory", 0, -1, 50, 1, 1},
        {"memory past 2^40 MiB", 0, (INT64_C(1) << 40) + 1, 50, 1, 1},
        {"negative CPU", -1000, 0, 50, 1, 1},
        {"65 GPUs a pod", 0, 0, 50, 65, 1},
        {"a negative priority", 0, 0, -1, 1, 1},
        {"preemptible 2", 0, 0, 50, 1, 2},
    };
    struct fixture *f = *state;
    struct db_workload w, got;
    struct db_queue *q = calloc(1, sizeof(*q));
    char name[32];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(name, sizeof(name), "bad-%zu", i);
        wl_init(f, name, "", &w);
        w.priority = bad[i].priority;
        w.preemptible = bad[i].preemptible;
        w.gpu_devices = bad[i].gpu_devices;
        w.cpu_milli = bad[i].cpu_milli;
        w.mem_mib = bad[i].mem_mib;
        if (db_workload_insert(f->tmp.db, &w) != DB_EINVAL)
            fail_msg("%s: not refused with DB_EINVAL", bad[i].what);
        assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_ENOTFOUND);
    }
    /* a quota below -1 (unlimited), and a rank past its bound */
    assert_non_null(q);
    assert_int_equal(db_queue_get(f->tmp.db, f->proj.id, q), DB_OK);
    q->quotas[0].deserved[0] = -2;
    assert_int_equal(db_queue_update(f->tmp.db, q), DB_EINVAL);
    assert_int_equal(db_queue_get(f->tmp.db, f->proj.id, q), DB_OK);
    q->rank = 5000;
    assert_int_equal(db_queue_update(f->tmp.db, q), DB_EINVAL);
    free(q);
}

static void test_schema_and_queues(void **state)
{
    struct fixture *f = *state;
    struct db_queue *q = calloc(1, sizeof(*q));
    struct db_queue *list = NULL;
    int64_t *purged = NULL;
    int n = 0;

    assert_true(db_schema_version() >= 1);
    assert_int_equal(db_queue_get(f->tmp.db, f->proj.id, q), DB_OK);
    assert_string_equal(q->name, "team-a");
    assert_string_equal(q->parent_id, f->dept.id);
    assert_int_equal(q->n_quotas, 1);
    assert_int_equal(q->quotas[0].deserved[0], 2000);
    assert_int_equal(db_queue_list(f->tmp.db, DB_PROJECT, &list, &n), DB_OK);
    assert_int_equal(n, 1);
    free(list);
    /* same name, same kind: conflict */
    q->kind = DB_PROJECT;
    assert_int_equal(db_queue_insert(f->tmp.db, q), DB_ECONFLICT);
    /* a department with a child cannot go */
    assert_int_equal(db_queue_delete(f->tmp.db, f->dept.seq, &purged, &n), DB_ECONFLICT);
    assert_null(purged);
    free(q);
}

struct writer_arg {
    struct fixture *f;
    int id;
    int failures;
};

static void *writer(void *p)
{
    struct writer_arg *a = p;
    struct db_workload w;
    char name[32];
    int i;

    for (i = 0; i < 50; i++) {
        snprintf(name, sizeof(name), "w%d-%d", a->id, i);
        if (submit(a->f, name, 1, &w) != DB_OK)
            a->failures++;
        db_workload_clear(&w);
    }
    return NULL;
}

static void test_group_commit(void **state)
{
    struct fixture *f = *state;
    pthread_t th[8];
    struct writer_arg args[8];
    struct db_wl_query q;
    int64_t commits, writes, before_c, before_w, count = 0;
    int i;

    db_writer_stats(f->tmp.db, &before_c, &before_w);
    for (i = 0; i < 8; i++) {
        args[i].f = f;
        args[i].id = i;
        args[i].failures = 0;
        pthread_create(&th[i], NULL, writer, &args[i]);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    db_writer_stats(f->tmp.db, &commits, &writes);
    assert_int_equal(writes - before_w, 400);
    /* concurrent writers share commits */
    assert_true(commits - before_c < 400);
    memset(&q, 0, sizeof(q));
    assert_int_equal(db_workload_count(f->tmp.db, &q, &count), DB_OK);
    assert_int_equal(count, 400);
}

/* Concurrent submitters under a project cap, some names shared between
 * them: submissions queued together are written together (on
 * PostgreSQL, one set-based statement), yet each gets the answer it
 * would get alone: a name taken fails that submission only, the cap
 * and the submitter's take exactly as many as they allow, and every
 * accepted workload is
 * stored under the seq it was given, with its one Submitted event. */
#define CAP_THREADS 8
#define CAP_EACH 25
#define CAP_PROJECT 150 /* of 165 distinct names: 8 x 20 own, 5 shared */
#define CAP_USER 22     /* each submitter (thread) has at least 20 to give */

struct capped_arg {
    struct fixture *f;
    int id;
    int rc[CAP_EACH];
    struct db_workload w[CAP_EACH];
};

static void *capped_submitter(void *p)
{
    static const struct db_pending_caps caps = {CAP_PROJECT, CAP_USER};
    struct capped_arg *a = p;
    char why[DB_MSG_LEN];
    int i;

    for (i = 0; i < CAP_EACH; i++) {
        struct db_workload *w = &a->w[i];
        char name[32], user[16];

        if (i % 5 == 0)
            snprintf(name, sizeof(name), "shared-%d", i / 5);
        else
            snprintf(name, sizeof(name), "own-%d-%d", a->id, i);
        snprintf(user, sizeof(user), "u%d", a->id);
        wl_init(a->f, name, user, w);
        a->rc[i] = db_workload_submit(a->f->tmp.db, w, &caps, why, sizeof(why));
    }
    return NULL;
}

static void test_group_set_answers(void **state)
{
    struct fixture *f = *state;
    pthread_t th[CAP_THREADS];
    struct capped_arg *args = calloc(CAP_THREADS, sizeof(*args));
    struct db_workload got;
    struct db_event *ev = NULL;
    struct db_wl_query q;
    int64_t commits, writes, before_c, before_w, count = 0;
    int i, k, n_ev = 0, ok = 0, mine, shared_ok[5] = {0};

    assert_non_null(args);
    db_writer_stats(f->tmp.db, &before_c, &before_w);
    for (i = 0; i < CAP_THREADS; i++) {
        args[i].f = f;
        args[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, capped_submitter, &args[i]), 0);
    }
    for (i = 0; i < CAP_THREADS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    db_writer_stats(f->tmp.db, &commits, &writes);
    assert_true(commits - before_c < writes - before_w); /* they shared commits */
    for (i = 0; i < CAP_THREADS; i++) {
        for (k = 0, mine = 0; k < CAP_EACH; k++) {
            struct db_workload *w = &args[i].w[k];
            int rc = args[i].rc[k];
            if (rc != DB_OK) {
                if (rc != DB_ELIMIT && !(rc == DB_ECONFLICT && k % 5 == 0))
                    fail_msg("%s: code %d", w->name, rc);
                continue;
            }
            ok++;
            mine++;
            shared_ok[k / 5] += k % 5 == 0;
            assert_int_equal(db_workload_get(f->tmp.db, w->id, &got), DB_OK);
            assert_string_equal(got.name, w->name);
            assert_int_equal(got.seq, w->seq);
            assert_int_equal(got.queued_seq, w->seq);
            assert_int_equal(db_event_list(f->tmp.db, w->seq, 0, 0, 10, &ev, &n_ev), DB_OK);
            assert_int_equal(n_ev, 1);
            assert_string_equal(ev[0].reason, "Submitted");
            free(ev);
            ev = NULL;
            db_workload_clear(&got);
            db_workload_clear(w);
        }
        assert_true(mine <= CAP_USER);
    }
    assert_int_equal(ok, CAP_PROJECT);
    for (k = 0; k < 5; k++)
        assert_true(shared_ok[k] <= 1);
    memset(&q, 0, sizeof(q));
    assert_int_equal(db_workload_count(f->tmp.db, &q, &count), DB_OK);
    assert_int_equal(count, CAP_PROJECT);
    free(args);
}

static void test_lifecycle_and_list(void **state)
{
    struct fixture *f = *state;
    struct db_workload w, got, *list = NULL;
    struct db_event *ev = NULL;
    struct db_wl_query q;
    int n = 0;

    assert_int_equal(submit(f, "a1", 1, &w), DB_OK);
    db_workload_clear(&w);
    assert_int_equal(submit(f, "a1", 1, &w), DB_ECONFLICT); /* live name taken */
    db_workload_clear(&w);
    assert_int_equal(submit(f, "a2", 2, &w), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_RESUME, "t", 1), DB_ECONFLICT);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_OK);
    assert_string_equal(got.phase, "Stopped");
    assert_int_equal(got.version, 2);
    db_workload_clear(&got);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_RESUME, "t", 2), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_DELETE, "t", 3), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_DELETE, "t", 4), DB_ENOTFOUND);
    assert_int_equal(db_event_list(f->tmp.db, w.seq, 0, 0, 50, &ev, &n), DB_OK);
    /* submitted, suspended, resumed, deleting, and deleted: no pod ran on
     * an agent, so the deletion ends at once */
    assert_int_equal(n, 5);
    assert_string_equal(ev[3].reason, "Deleting");
    assert_string_equal(ev[4].reason, "Deleted");
    free(ev);
    assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_OK);
    assert_string_equal(got.phase, "Stopped");
    assert_true(got.deleted_at > 0);
    db_workload_clear(&got);
    db_workload_clear(&w);

    memset(&q, 0, sizeof(q));
    q.limit = 10;
    q.n_filters = 1;
    strcpy(q.filters[0].field, "name");
    strcpy(q.filters[0].op, "=^");
    strcpy(q.filters[0].value, "a");
    assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &n), DB_OK);
    assert_int_equal(n, 1); /* a2 is deleted */
    assert_string_equal(list[0].name, "a1");
    db_workloads_free(list, n);
    q.include_deleted = 1;
    strcpy(q.sort_by, "name");
    q.desc = 1;
    assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &n), DB_OK);
    assert_int_equal(n, 2);
    assert_string_equal(list[0].name, "a2");
    db_workloads_free(list, n);
    strcpy(q.filters[0].field, "nosuchfield");
    assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &n), DB_EINVAL);
    strcpy(q.filters[0].field, "createdAt");
    strcpy(q.filters[0].op, ">=");
    strcpy(q.filters[0].value, "2020-01-01T00:00:00Z");
    assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &n), DB_OK);
    assert_int_equal(n, 2);
    db_workloads_free(list, n);
}

/* A page read again in a read transaction at the same data version comes
 * from the reader's memo (SQLite): it is the same rows, byte for byte, and
 * a commit by the writer (a suspend, a new workload, a deletion) shows in
 * the next read of that page. On PostgreSQL every read steps its
 * statement; the assertions hold the same. */
static void same_rows(const struct db_workload *a, const struct db_workload *b, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        assert_memory_equal(&a[i], &b[i], offsetof(struct db_workload, spec));
        assert_string_equal(a[i].spec ? a[i].spec : "", b[i].spec ? b[i].spec : "");
    }
}

static void test_list_memo(void **state)
{
    struct fixture *f = *state;
    struct db_workload w, *l1 = NULL, *l2 = NULL;
    struct db_wl_query q;
    int64_t seqs[3];
    int n1 = 0, n2 = 0, i;
    static const char *const names[] = {"m1", "m2", "m3"};

    for (i = 0; i < 3; i++) {
        assert_int_equal(submit(f, names[i], 1, &w), DB_OK);
        seqs[i] = w.seq;
        db_workload_clear(&w);
    }
    memset(&q, 0, sizeof(q));
    q.limit = 10;
    strcpy(q.sort_by, "name");
    assert_int_equal(db_workload_list(f->tmp.db, &q, &l1, &n1), DB_OK);
    assert_int_equal(db_workload_list(f->tmp.db, &q, &l2, &n2), DB_OK);
    assert_int_equal(n1, 3);
    assert_int_equal(n2, 3);
    same_rows(l1, l2, 3);
    db_workloads_free(l2, n2);

    /* the writer's commit moves the version: the page is read again */
    assert_int_equal(db_workload_act(f->tmp.db, seqs[1], DB_WL_SUSPEND, "t", 5), DB_OK);
    assert_int_equal(db_workload_list(f->tmp.db, &q, &l2, &n2), DB_OK);
    assert_int_equal(n2, 3);
    assert_string_equal(l2[1].phase, "Stopped");
    assert_int_equal(l2[1].version, l1[1].version + 1);
    same_rows(&l1[0], &l2[0], 1);
    db_workloads_free(l2, n2);
    assert_int_equal(db_workload_list(f->tmp.db, &q, &l2, &n2), DB_OK); /* and kept again */
    assert_string_equal(l2[1].phase, "Stopped");
    db_workloads_free(l2, n2);

    /* a deletion leaves the same first page's seqs but moves the version */
    q.limit = 1;
    assert_int_equal(db_workload_list(f->tmp.db, &q, &l2, &n2), DB_OK);
    assert_string_equal(l2[0].desired_phase, "Running");
    db_workloads_free(l2, n2);
    assert_int_equal(db_workload_act(f->tmp.db, seqs[0], DB_WL_DELETE, "t", 6), DB_OK);
    q.include_deleted = 1;
    assert_int_equal(db_workload_list(f->tmp.db, &q, &l2, &n2), DB_OK);
    assert_int_equal(n2, 1);
    assert_string_equal(l2[0].name, "m1");
    assert_true(l2[0].deleted_at > 0);
    db_workloads_free(l2, n2);
    db_workloads_free(l1, n1);
}

/* Paging: every page, at every offset, holds the rows the whole sorted
 * list has there, for a sort key with ties (priority: the seq breaks
 * them) and a unique one (name), ascending and descending; a page past
 * the end is empty. */
#define PAGING_ROWS 157
#define PAGING_PRIORITIES 4

static int expected_at(int sort_name, int desc, int pos)
{
    /* Row i is named "p%03d" and has priority i % PAGING_PRIORITIES;
     * it was inserted i-th, so its seq grows with i. */
    int per = PAGING_ROWS / PAGING_PRIORITIES, extra = PAGING_ROWS % PAGING_PRIORITIES;
    int prio = 0, count;

    if (desc)
        pos = PAGING_ROWS - 1 - pos;
    if (sort_name)
        return pos;
    for (;; prio++) {
        count = per + (prio < extra);
        if (pos < count)
            break;
        pos -= count;
    }
    return prio + pos * PAGING_PRIORITIES;
}

static void test_list_paging(void **state)
{
    static const struct { const char *sort; int desc, page; } cases[] = {
        {"priority", 0, 7}, {"priority", 1, 7}, {"name", 0, 10},
        {"name", 1, 3},     {"priority", 0, 1}, {"priority", 1, 50},
    };
    struct fixture *f = *state;
    struct db_workload w, *list = NULL;
    struct db_wl_query q;
    char name[32];
    size_t c;
    int i, n, offset, want;

    for (i = 0; i < PAGING_ROWS; i++) {
        snprintf(name, sizeof(name), "p%03d", i);
        assert_int_equal(submit_priority(f, name, 1, i % PAGING_PRIORITIES, &w), DB_OK);
        db_workload_clear(&w);
    }
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        memset(&q, 0, sizeof(q));
        strcpy(q.sort_by, cases[c].sort);
        q.desc = cases[c].desc;
        q.limit = cases[c].page;
        for (offset = 0; offset < PAGING_ROWS + cases[c].page; offset += cases[c].page) {
            q.offset = offset;
            assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &n), DB_OK);
            want = PAGING_ROWS - offset < cases[c].page ? PAGING_ROWS - offset : cases[c].page;
            assert_int_equal(n, want < 0 ? 0 : want);
            for (i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "p%03d",
                         expected_at(strcmp(cases[c].sort, "name") == 0, q.desc, offset + i));
                assert_string_equal(list[i].name, name);
                assert_string_equal(list[i].project_name, "team-a");
            }
            db_workloads_free(list, n);
        }
    }
}

/* An update that gives workload w one pod, pod, and the phase. */
static void one_pod_update(struct db_wl_update *u, const struct db_sched_wl *w, const char *phase,
                           struct db_sched_pod *pod)
{
    memset(u, 0, sizeof(*u));
    u->seq = w->seq;
    u->version = w->version;
    u->phase = phase;
    u->phase_reason = "";
    u->phase_message = "";
    u->pods_changed = 1;
    u->pods = pod;
    u->n_pods = 1;
}

/* A list's statement is built at run time and cached by its text, a few
 * per connection: more distinct statements than the cache holds (every
 * sort key, both orders), run three times over (the second and third
 * find some cached, others evicted and prepared again), give the same
 * rows each time, and the right ones. */
static void test_list_statements_cached(void **state)
{
    static const char *const keys[] = {
        "name", "id", "type", "category", "projectName", "projectId", "departmentName",
        "departmentId", "phase", "submittedBy", "priorityClassName", "nodepool", "priority",
        "createdAt", "deletedAt", "completedAt", "phaseUpdatedAt", "allocatedGPU"};
    enum { KEYS = sizeof(keys) / sizeof(keys[0]), ROWS = 5, PAGE = 3 };
    struct fixture *f = *state;
    struct db_workload w, *list = NULL;
    struct db_wl_query q;
    char first[2 * KEYS][PAGE][DB_NAME_LEN], name[32];
    int64_t count = 0;
    int i, k, pass, n;

    for (i = 0; i < ROWS; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        assert_int_equal(submit_priority(f, name, 1, i % 2, &w), DB_OK);
        db_workload_clear(&w);
    }
    for (pass = 0; pass < 3; pass++)
        for (k = 0; k < 2 * KEYS; k++) {
            int at = pass == 2 ? 2 * KEYS - 1 - k : k; /* the third pass backwards */
            memset(&q, 0, sizeof(q));
            strcpy(q.sort_by, keys[at / 2]);
            q.desc = at % 2;
            q.limit = PAGE;
            q.offset = pass; /* other bindings, same text */
            q.n_filters = 1;
            strcpy(q.filters[0].field, "name");
            strcpy(q.filters[0].op, "=^");
            strcpy(q.filters[0].value, "c");
            assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &n), DB_OK);
            assert_int_equal(n, PAGE);
            for (i = 0; i < n; i++) {
                if (pass == 0)
                    strcpy(first[at][i], list[i].name);
                else if (pass == 1) /* one row further on */
                    assert_string_equal(i + 1 < PAGE ? first[at][i + 1] : list[i].name,
                                        list[i].name);
            }
            if (strcmp(keys[at / 2], "name") == 0)
                for (i = 0; i < n; i++) {
                    snprintf(name, sizeof(name), "c%d", q.desc ? ROWS - 1 - pass - i : pass + i);
                    assert_string_equal(list[i].name, name);
                }
            db_workloads_free(list, n);
            assert_int_equal(db_workload_count(f->tmp.db, &q, &count), DB_OK);
            assert_int_equal(count, ROWS);
        }
}

static void test_cycle_apply(void **state)
{
    struct fixture *f = *state;
    struct db_node node;
    struct db_workload a, b, got;
    struct db_snapshot *s = NULL;
    struct db_sched_pod pod;
    struct db_wl_update ups[2];
    struct db_wl_event evs[2];
    struct db_cycle cy;
    struct db_pod *pods = NULL;
    int applied = -1, n = -1;

    node_add(f, &node);
    assert_int_equal(submit(f, "x1", 1, &a), DB_OK);
    assert_int_equal(submit(f, "x2", 1, &b), DB_OK);
    assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
    assert_int_equal(s->n_workloads, 2);
    assert_int_equal(s->n_nodes, 1);
    for (int i = 0; i < 2; i++) /* queue order: a submission's own seq, written with it */
        assert_int_equal(s->workloads[i].queued_seq, s->workloads[i].seq);
    /* x2 is suspended after the snapshot: its decision must be dropped */
    assert_int_equal(db_workload_act(f->tmp.db, b.seq, DB_WL_SUSPEND, "t", 5), DB_OK);
    pod.node_seq = node.seq;
    pod.devices = 1;
    memset(ups, 0, sizeof(ups));
    for (int i = 0; i < 2; i++) {
        one_pod_update(&ups[i], &s->workloads[i], "Running", &pod);
        evs[i].workload_seq = ups[i].seq;
        evs[i].type = "Normal";
        evs[i].reason = "Running";
        evs[i].message = "placed";
        evs[i].pool_seq = 0;
    }
    cy = (struct db_cycle){.now_ms = 10, .updates = ups, .n_updates = 2, .events = evs,
                           .n_events = 2};
    assert_int_equal(db_cycle_apply(f->tmp.db, &cy, &applied), DB_OK);
    assert_int_equal(applied, 1);
    assert_int_equal(db_workload_get(f->tmp.db, a.id, &got), DB_OK);
    assert_string_equal(got.phase, "Running");
    assert_int_equal(got.running_pods, 1);
    db_workload_clear(&got);
    assert_int_equal(db_workload_get(f->tmp.db, b.id, &got), DB_OK);
    assert_string_equal(got.phase, "Stopped");
    assert_int_equal(got.running_pods, 0);
    db_workload_clear(&got);
    /* a workload with its pods in one read (GET of one workload) */
    assert_int_equal(db_workload_get_pods(f->tmp.db, a.id, &got, &pods, &n), DB_OK);
    assert_int_equal(got.seq, a.seq);
    assert_int_equal(got.running_pods, 1);
    assert_int_equal(n, 1);
    assert_int_equal(pods[0].workload_seq, a.seq);
    assert_int_equal(pods[0].node_seq, node.seq);
    assert_int_equal(pods[0].devices, 1);
    db_workload_clear(&got);
    free(pods);
    assert_int_equal(db_workload_get_pods(f->tmp.db, b.id, &got, &pods, &n), DB_OK);
    assert_string_equal(got.phase, "Stopped");
    assert_int_equal(n, 0);
    db_workload_clear(&got);
    free(pods);
    assert_int_equal(db_workload_get_pods(f->tmp.db, "no-such-id", &got, &pods, &n), DB_ENOTFOUND);
    assert_null(pods);
    assert_int_equal(n, 0);
    db_workload_clear(&got);
    db_snapshot_free(s);
    db_workload_clear(&a);
    db_workload_clear(&b);
}

/* A cycle's texts and pods land as given (SQLite writes a cycle with one
 * statement per table over JSON arrays: quotes, backslashes, control
 * characters and UTF-8 survive it), a moved pod is rewritten, an
 * unplaced one goes, and a later cycle's events follow the earlier ones. */
static void test_cycle_apply_texts(void **state)
{
    static const char msg[] = "say \"no\" \\ tab\there\nnext \x01 gr\xc3\xbc\xc3\x9f" "e";
    struct fixture *f = *state;
    struct db_node node;
    struct db_workload w[3], got;
    struct db_snapshot *s = NULL;
    struct db_sched_pod pods[3][2];
    struct db_wl_update ups[3];
    struct db_wl_event evs[3];
    struct db_cycle cy = {0};
    struct db_event *ev = NULL;
    struct db_pod *pl = NULL;
    int applied = -1, n = 0, i, round;

    node_add(f, &node);
    for (i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "t%d", i);
        assert_int_equal(submit(f, name, 1, &w[i]), DB_OK);
    }
    for (round = 0; round < 2; round++) {
        assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
        assert_int_equal(s->n_workloads, 3);
        memset(ups, 0, sizeof(ups));
        for (i = 0; i < 3; i++) {
            /* round 0: each on two pods; round 1: t0 as it was, t1's second pod moved,
             * t2 unplaced (Pending, with the message) */
            pods[i][0].node_seq = round && i == 2 ? 0 : node.seq;
            pods[i][0].devices = 1;
            pods[i][1].node_seq = round && i == 2 ? 0 : node.seq;
            pods[i][1].devices = round && i == 1 ? 4 : 2;
            ups[i].seq = s->workloads[i].seq;
            ups[i].version = s->workloads[i].version;
            ups[i].phase = round && i == 2 ? "Pending" : "Running";
            ups[i].phase_reason = round && i == 2 ? "Preempted" : "";
            ups[i].phase_message = round && i == 2 ? msg : "";
            ups[i].started_ms = round && i == 2 ? 0 : 100 + i;
            ups[i].pods_changed = 1;
            ups[i].pods = pods[i];
            ups[i].n_pods = 2;
            evs[i].workload_seq = ups[i].seq;
            evs[i].type = round ? "Warning" : "Normal";
            evs[i].reason = round ? "Moved" : "Running";
            evs[i].message = msg;
            evs[i].pool_seq = 0;
        }
        cy = (struct db_cycle){.now_ms = 1000 + round, .updates = ups, .n_updates = 3,
                               .events = evs, .n_events = 3};
        assert_int_equal(db_cycle_apply(f->tmp.db, &cy, &applied), DB_OK);
        assert_int_equal(applied, 3);
        db_snapshot_free(s);
        assert_int_equal(db_pod_list(f->tmp.db, 0, &pl, &n), DB_OK);
        assert_int_equal(n, round ? 4 : 6);
        free(pl);
    }
    assert_int_equal(db_workload_get(f->tmp.db, w[2].id, &got), DB_OK);
    assert_string_equal(got.phase, "Pending");
    assert_string_equal(got.phase_reason, "Preempted");
    assert_string_equal(got.phase_message, msg);
    assert_int_equal(got.running_pods, 0);
    db_workload_clear(&got);
    assert_int_equal(db_workload_get(f->tmp.db, w[1].id, &got), DB_OK);
    assert_int_equal(got.started_ms, 101);
    assert_int_equal(got.phase_updated_at, 1000); /* Running since the first round */
    db_workload_clear(&got);
    assert_int_equal(db_pod_list(f->tmp.db, w[1].seq, &pl, &n), DB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(pl[1].devices, 4);
    free(pl);
    assert_int_equal(db_event_list(f->tmp.db, w[0].seq, 0, 0, 50, &ev, &n), DB_OK);
    assert_int_equal(n, 3); /* submitted, then the two rounds in order */
    assert_string_equal(ev[1].reason, "Running");
    assert_string_equal(ev[2].reason, "Moved");
    assert_string_equal(ev[2].type, "Warning");
    assert_string_equal(ev[2].message, msg);
    assert_int_equal(ev[2].created_at, 1001);
    assert_true(ev[1].seq < ev[2].seq);
    free(ev);
    for (i = 0; i < 3; i++)
        db_workload_clear(&w[i]);
}

/* A cycle in turns: turn 1 the update before the last n_after (t0 back
 * to Pending), then the placements in turns of t.rows, which doubles
 * while turns run under their target (here: always), on both stores.
 * t7 is suspended
 * after the snapshot: its update and event are dropped alone. Every
 * other placement lands with its pods and its events in order. */
static void test_cycle_apply_turns(void **state)
{
    enum { N = 10 };
    struct fixture *f = *state;
    struct db_node node;
    struct db_workload w[N], got;
    struct db_snapshot *s = NULL;
    struct db_sched_pod pods[N];
    struct db_wl_update ups[N];
    struct db_wl_event evs[N + 1];
    struct db_cycle cy = {0};
    struct db_turns t = {0};
    struct db_event *ev = NULL;
    int64_t held[N + 2], held_cpu[N + 2];
    int applied = -1, n = 0, i;

    node_add(f, &node);
    for (i = 0; i < N; i++) {
        char name[8];
        snprintf(name, sizeof(name), "t%d", i);
        assert_int_equal(submit(f, name, 1, &w[i]), DB_OK);
    }
    assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
    assert_int_equal(s->n_workloads, N);
    assert_int_equal(db_workload_act(f->tmp.db, w[7].seq, DB_WL_SUSPEND, "t", 5), DB_OK);
    memset(ups, 0, sizeof(ups));
    for (i = 0; i < N; i++) {
        pods[i].node_seq = i ? node.seq : 0;
        pods[i].devices = (uint64_t)1 << (i % 2);
        one_pod_update(&ups[i], &s->workloads[i], i ? "Running" : "Pending", &pods[i]);
        evs[i].workload_seq = ups[i].seq;
        evs[i].type = "Normal";
        evs[i].reason = i ? "Running" : "Preempted";
        evs[i].message = "first";
        evs[i].pool_seq = 0;
    }
    evs[N] = evs[5];
    evs[N].message = "second";
    cy = (struct db_cycle){.now_ms = 2000, .updates = ups, .n_updates = N, .events = evs,
                           .n_events = N + 1};
    t.n_after = N - 1;
    t.turn_us = (int64_t)1 << 50;
    t.rows = 4;
    t.held_us = held;
    t.held_cpu_us = held_cpu;
    assert_int_equal(db_cycle_apply_turns(f->tmp.db, &cy, &t, &applied), DB_OK);
    db_snapshot_free(s);
    assert_int_equal(applied, N - 1);
    /* [0,1), [1,5), [5,10) */
    assert_int_equal(t.n_turns, 3);
    assert_int_equal(t.rows, 8);
    for (i = 0; i < t.n_turns; i++)   /* each turn's writer CPU, within its time */
        assert_true(held_cpu[i] >= 0 && held_cpu[i] <= held[i] + 100);
    for (i = 0; i < N; i++) {
        assert_int_equal(db_workload_get(f->tmp.db, w[i].id, &got), DB_OK);
        assert_int_equal(got.running_pods, i && i != 7 ? 1 : 0);
        assert_string_equal(got.phase, i == 7 ? "Stopped" : i ? "Running" : "Pending");
        db_workload_clear(&got);
    }
    assert_int_equal(db_event_list(f->tmp.db, w[5].seq, 0, 0, 50, &ev, &n), DB_OK);
    assert_int_equal(n, 3); /* submitted, then the cycle's two in order */
    assert_string_equal(ev[1].message, "first");
    assert_string_equal(ev[2].message, "second");
    free(ev);
    assert_int_equal(db_event_list(f->tmp.db, w[7].seq, 0, 0, 50, &ev, &n), DB_OK);
    for (i = 0; i < n; i++)
        assert_string_not_equal(ev[i].reason, "Running");
    free(ev);
    /* a turn count that names more updates than there are is refused */
    t.n_after = N + 1;
    assert_int_equal(db_cycle_apply_turns(f->tmp.db, &cy, &t, &applied), DB_EINVAL);
    for (i = 0; i < N; i++)
        db_workload_clear(&w[i]);
}

struct writes_arg {
    struct fixture *f;
    int n, failed;
};

static void *submit_many(void *arg)
{
    struct writes_arg *a = arg;
    struct db_workload w;
    char name[16];
    int i;

    for (i = 0; i < a->n; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        a->failed += submit(a->f, name, 1, &w) != DB_OK;
        db_workload_clear(&w);
    }
    return NULL;
}

/* Turns of the least size while another thread submits: the writer parks
 * the cycle between turns for the submissions that wait, and resumes it;
 * every placement and every submission lands. */
static void test_cycle_turns_yield(void **state)
{
    enum { N = 300, SUBMITS = 200 };
    struct fixture *f = *state;
    struct db_node node;
    struct db_workload w;
    struct db_snapshot *s = NULL;
    struct db_sched_pod pod;
    struct db_wl_update *ups = calloc(N, sizeof(*ups));
    struct db_cycle cy = {0};
    struct db_turns t = {0};
    int64_t *held = calloc(N + 2, sizeof(*held));
    struct writes_arg wa = {f, SUBMITS, 0};
    struct db_pod *pl = NULL;
    pthread_t th;
    int applied = -1, n = 0, i;

    assert_non_null(ups);
    assert_non_null(held);
    node_add(f, &node);
    for (i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "y%d", i);
        assert_int_equal(submit(f, name, 1, &w), DB_OK);
        db_workload_clear(&w);
    }
    assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
    assert_int_equal(s->n_workloads, N);
    pod.node_seq = node.seq;
    pod.devices = 1;
    for (i = 0; i < N; i++) {
        one_pod_update(&ups[i], &s->workloads[i], "Running", &pod);
    }
    cy = (struct db_cycle){.now_ms = 3000, .updates = ups, .n_updates = N};
    t.n_after = N;
    t.turn_us = 1; /* every turn past its target: the least rows */
    t.held_us = held;
    t.held_cpu_us = NULL;
    assert_int_equal(pthread_create(&th, NULL, submit_many, &wa), 0);
    assert_int_equal(db_cycle_apply_turns(f->tmp.db, &cy, &t, &applied), DB_OK);
    assert_int_equal(pthread_join(th, NULL), 0);
    db_snapshot_free(s);
    assert_int_equal(wa.failed, 0);
    assert_int_equal(applied, N);
    assert_true(t.n_turns > N / 32);
    assert_int_equal(db_pod_list(f->tmp.db, 0, &pl, &n), DB_OK);
    assert_int_equal(n, N);
    free(pl);
    free(ups);
    free(held);
}

/* Reasons and messages alone, in bounded writes: with no budget each
 * write takes one row; a row changed since the snapshot is skipped; the
 * phase is left as it was. */
static void test_reasons_apply(void **state)
{
    static const char *const names[3] = {"r1", "r2", "r3"};
    struct fixture *f = *state;
    struct db_workload w[3], got;
    struct db_snapshot *s = NULL;
    struct db_wl_update ups[3];
    struct db_cycle cy;
    /* a piece with no budget: one row; on PostgreSQL one statement (64 rows) */
    int piece = db_is_server(f->tmp.path) ? 3 : 1;
    int i, done = -1, applied = 0, from = 0, calls = 0;
    int64_t held = -1, held_cpu = -1;

    for (i = 0; i < 3; i++)
        assert_int_equal(submit(f, names[i], 1, &w[i]), DB_OK);
    assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
    assert_int_equal(s->n_workloads, 3);
    assert_int_equal(db_workload_act(f->tmp.db, w[1].seq, DB_WL_SUSPEND, "t", 5), DB_OK);
    memset(ups, 0, sizeof(ups));
    for (i = 0; i < 3; i++) {
        ups[i].seq = s->workloads[i].seq;
        ups[i].version = s->workloads[i].version;
        ups[i].phase = "Pending";
        ups[i].phase_reason = "QueueFairShareReached";
        ups[i].phase_message = names[i];
    }
    memset(&cy, 0, sizeof(cy));
    cy.now_ms = 10;
    while (from < 3) {
        cy.updates = ups + from;
        cy.n_updates = 3 - from;
        assert_int_equal(db_reasons_apply(f->tmp.db, &cy, 0, &done, &applied, &held, &held_cpu),
                         DB_OK);
        assert_int_equal(done, piece);
        assert_true(held >= 0);
        assert_true(held_cpu >= 0 && held_cpu <= held + 100);   /* the writer's CPU within it */
        from += done;
        calls++;
    }
    assert_int_equal(calls, 3 / piece);
    assert_int_equal(applied, 2);
    for (i = 0; i < 3; i++) {
        assert_int_equal(db_workload_get(f->tmp.db, w[i].id, &got), DB_OK);
        assert_string_equal(got.phase_message, i == 1 ? "" : names[i]);
        assert_string_equal(got.phase, i == 1 ? "Stopped" : "Pending");
        db_workload_clear(&got);
    }
    /* a budget that holds them all: one write; events are refused */
    cy.updates = ups;
    cy.n_updates = 3;
    applied = 0;
    assert_int_equal(
        db_reasons_apply(f->tmp.db, &cy, 60 * 1000000LL, &done, &applied, &held, &held_cpu), DB_OK);
    assert_int_equal(done, 3);
    assert_int_equal(applied, 2);
    /* a workload twice among them: the later one wins, as row by row */
    ups[1] = ups[0];
    ups[1].phase_message = "later";
    applied = 0;
    assert_int_equal(
        db_reasons_apply(f->tmp.db, &cy, 60 * 1000000LL, &done, &applied, &held, &held_cpu), DB_OK);
    assert_int_equal(applied, 3);
    assert_int_equal(db_workload_get(f->tmp.db, w[0].id, &got), DB_OK);
    assert_string_equal(got.phase_message, "later");
    db_workload_clear(&got);
    cy.n_events = 1;
    assert_int_equal(db_reasons_apply(f->tmp.db, &cy, 0, &done, &applied, &held, &held_cpu),
                     DB_EINVAL);
    assert_int_equal(done, 0);
    db_snapshot_free(s);
    for (i = 0; i < 3; i++)
        db_workload_clear(&w[i]);
}

static void test_reopen_keeps_rows(void **state)
{
    struct fixture *f = *state;
    struct db_workload w, got;

    assert_int_equal(submit(f, "durable", 1, &w), DB_OK);
    db_close(f->tmp.db);
    f->tmp.db = NULL;
    assert_int_equal(db_open(f->tmp.path, DB_OPEN_EXISTING, &f->tmp.db), DB_OK);
    assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_OK);
    assert_string_equal(got.name, "durable");
    db_workload_clear(&got);
    db_workload_clear(&w);
}

static void test_pools(void **state)
{
    struct fixture *f = *state;
    struct db_pool p, got;
    struct db_node n;

    memset(&p, 0, sizeof(p));
    strcpy(p.name, "a100");
    strcpy(p.label_key, "k");
    strcpy(p.label_value, "a100");
    assert_int_equal(db_pool_insert(f->tmp.db, &p), DB_OK);
    assert_int_equal(db_pool_get(f->tmp.db, p.seq, &got), DB_OK);
    assert_int_equal(got.tbf_window_ms, 7LL * 24 * 3600 * 1000); /* defaults filled */
    assert_int_equal(got.tbf_k_milli, 1000);
    got.gpu_placement = 1;
    got.min_runtime_ms = 90000;
    got.tbf_enabled = 1;
    got.tbf_half_life_ms = 3600000;
    assert_int_equal(db_pool_update(f->tmp.db, &got), DB_OK);
    assert_int_equal(db_pool_get(f->tmp.db, p.seq, &got), DB_OK);
    assert_int_equal(got.gpu_placement, 1);
    assert_int_equal(got.min_runtime_ms, 90000);
    assert_int_equal(got.tbf_enabled, 1);
    assert_int_equal(got.tbf_half_life_ms, 3600000);
    memset(&n, 0, sizeof(n));
    strcpy(n.name, "n1");
    strcpy(n.node_type, "dgx");
    n.pool_seq = p.seq;
    n.n_gpus = 8;
    n.ready = 1;
    assert_int_equal(db_node_upsert_many(f->tmp.db, &n, 1), DB_OK);
    assert_int_equal(db_pool_delete(f->tmp.db, p.seq), DB_ECONFLICT); /* it holds a node */
    n.pool_seq = f->pool.seq;
    assert_int_equal(db_node_upsert(f->tmp.db, &n), DB_OK);
    assert_int_equal(db_pool_delete(f->tmp.db, p.seq), DB_OK);
    assert_int_equal(db_pool_get(f->tmp.db, p.seq, &got), DB_ENOTFOUND);
    assert_int_equal(db_pool_delete(f->tmp.db, p.seq), DB_ENOTFOUND);
}

static void test_partial_reads(void **state)
{
    struct fixture *f = *state;
    struct db_workload a, b, c;
    struct db_snapshot *s = NULL;
    int64_t seqs[4];
    int rcs[2];

    assert_int_equal(submit(f, "a", 1, &a), DB_OK);
    assert_int_equal(submit(f, "b", 1, &b), DB_OK);
    assert_int_equal(submit(f, "c", 1, &c), DB_OK);
    assert_int_equal(db_topology_load(f->tmp.db, &s), DB_OK);
    assert_int_equal(s->n_pools, 1);
    assert_int_equal(s->n_queues, 2);
    assert_int_equal(s->n_workloads, 0);
    db_snapshot_free(s);
    seqs[0] = a.seq;
    seqs[1] = b.seq;
    assert_int_equal(db_workload_act_many(f->tmp.db, seqs, 2, DB_WL_SUSPEND, "t", 1, NULL, rcs), DB_OK);
    assert_int_equal(rcs[0], DB_OK);
    assert_int_equal(rcs[1], DB_OK);
    seqs[1] = c.seq;
    /* resuming a that is suspended and c that is not: c alone fails */
    assert_int_equal(db_workload_act_many(f->tmp.db, seqs, 2, DB_WL_RESUME, "t", 2, NULL, rcs), DB_OK);
    assert_int_equal(rcs[0], DB_OK);
    assert_int_equal(rcs[1], DB_ECONFLICT);
    seqs[0] = a.seq;
    seqs[1] = b.seq;
    seqs[2] = c.seq;
    seqs[3] = 999999;
    assert_int_equal(db_workloads_load(f->tmp.db, seqs, 4, &s), DB_OK);
    assert_int_equal(s->n_workloads, 2); /* b is Stopped, 999999 does not exist */
    assert_int_equal(s->workloads[0].seq, a.seq);
    assert_int_equal(s->workloads[1].seq, c.seq);
    assert_string_equal(s->workloads[1].phase, "Pending");
    db_snapshot_free(s);
    db_workload_clear(&a);
    db_workload_clear(&b);
    db_workload_clear(&c);
}

/* A shared snapshot stays whole until its last holder lets go (ASan: a
 * read after an early free, or a leak when the last one does not free). */
static void test_snapshot_shared(void **state)
{
    struct fixture *f = *state;
    struct db_workload a;
    struct db_snapshot *s = NULL, *held[3];
    int i;

    assert_int_equal(submit(f, "shared", 1, &a), DB_OK);
    assert_int_equal(db_snapshot_load(f->tmp.db, &s), DB_OK);
    held[0] = s;
    held[1] = db_snapshot_share(s);
    held[2] = db_snapshot_share(s);
    assert_ptr_equal(held[1], s);
    assert_ptr_equal(held[2], s);
    assert_null(db_snapshot_share(NULL));
    for (i = 0; i < 3; i++) {
        assert_int_equal(s->n_workloads, 1);   /* every hold before this one let go */
        assert_string_equal(s->workloads[0].name, "shared");
        assert_int_equal(s->n_pools, 1);
        db_snapshot_free(held[i]);
    }
    db_workload_clear(&a);
}

/* An id as RFC 9562 version 7 writes it: 8-4-4-4-12 lowercase hex, the
 * version 7, the variant 10. */
static void assert_v7(const char *id)
{
    int k;

    assert_int_equal(strlen(id), 36);
    for (k = 0; k < 36; k++) {
        if (k == 8 || k == 13 || k == 18 || k == 23)
            assert_int_equal(id[k], '-');
        else
            assert_non_null(strchr("0123456789abcdef", id[k]));
    }
    assert_int_equal(id[14], '7');
    assert_non_null(strchr("89ab", id[19]));
}

/* By the random part (after the milliseconds and the version). */
static int id_random_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a + 15, (const char *)b + 15);
}

/* Ids: the v7 shape, all distinct over many (more than one pool of random
 * bytes), and a forked child's ids are not the ones its parent makes next
 * (the child starts with an empty pool). */
static void test_ids(void **state)
{
    enum { N = 4096 };
    char (*ids)[DB_ID_LEN] = calloc(N + 8, DB_ID_LEN);
    int fds[2], k;
    pid_t pid;

    (void)state;
    assert_non_null(ids);
    for (k = 0; k < N; k++) {
        db_uuid_new(ids[k]);
        assert_v7(ids[k]);
    }
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (k = 0; k < 4; k++) {
            char id[DB_ID_LEN];

            db_uuid_new(id);
            if (write(fds[1], id, DB_ID_LEN) != DB_ID_LEN)
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    for (k = 0; k < 4; k++)
        assert_int_equal(read(fds[0], ids[N + k], DB_ID_LEN), DB_ID_LEN);
    close(fds[0]);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    for (k = 0; k < 4; k++)
        db_uuid_new(ids[N + 4 + k]);
    /* the random part alone (74 bits) never repeats */
    qsort(ids, N + 8, DB_ID_LEN, id_random_cmp);
    for (k = 1; k < N + 8; k++)
        assert_true(id_random_cmp(ids[k - 1], ids[k]) < 0);
    free(ids);
}

/* ISO-8601 times: "Z", offsets, a '+' a query string turned into ' '. */
static void test_time_parse(void **state)
{
    static const struct {
        const char *text;
        int64_t ms;                    /* -1: refused */
    } cases[] = {
        {"2021-01-01", 1609459200000LL},
        {"2021-01-01T00:00:00Z", 1609459200000LL},
        {"2021-01-01T00:00:00.25Z", 1609459200250LL},
        {"2021-01-01T00:00:00", 1609459200000LL},
        {"2021-01-01T00:00:00+00:00", 1609459200000LL},
        {"2021-01-01T02:00:00+02:00", 1609459200000LL},
        {"2021-01-01T02:00:00 02:00", 1609459200000LL},
        {"2020-12-31T19:30:00-0430", 1609459200000LL},
        {"2021-01-01T05:00:00.000+05", 1609459200000LL},
        {"2021-01-01T00:00:00+24:00", -1},
        {"2021-01-01T00:00:00+2:00", -1},
        {"2021-01-01T00:00:00.Z", -1},
        {"2021-01-01T00:00:00Zjunk", -1},
        {"2021-13-01", -1},
        {"yesterday", -1},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -1;
        int rc = db_time_parse(cases[i].text, &ms);
        if (cases[i].ms < 0 && rc == DB_OK)
            fail_msg("%s was taken as %lld", cases[i].text, (long long)ms);
        if (cases[i].ms >= 0 && (rc != DB_OK || ms != cases[i].ms))
            fail_msg("%s: rc %d, %lld, wanted %lld", cases[i].text, rc, (long long)ms,
                     (long long)cases[i].ms);
    }
}

/* Deleted workloads are purged after the retention, or with their project;
 * a purged seq is never given again, not even the largest. */
static void test_purge(void **state)
{
    struct fixture *f = *state;
    struct db_workload w, old, got;
    int64_t *seqs = NULL, live_seq;
    int n = 0;

    assert_int_equal(submit(f, "old", 1, &old), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, old.seq, DB_WL_DELETE, "t", 1000), DB_OK);
    assert_int_equal(submit(f, "new", 1, &w), DB_OK);
    assert_int_equal(db_workload_act(f->tmp.db, w.seq, DB_WL_DELETE, "t", 5000), DB_OK);
    /* a project with a live workload stays */
    assert_int_equal(submit(f, "live", 1, &got), DB_OK);
    live_seq = got.seq;
    db_workload_clear(&got);
    assert_int_equal(db_queue_delete(f->tmp.db, f->proj.seq, &seqs, &n), DB_ECONFLICT);
    /* deleted before 2000: only "old" */
    assert_int_equal(db_workloads_purge(f->tmp.db, 2000, &seqs, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_true(seqs[0] == old.seq);
    free(seqs);
    assert_int_equal(db_workload_get(f->tmp.db, old.id, &got), DB_ENOTFOUND);
    assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_OK);
    db_workload_clear(&got);
    /* once "live" is deleted too, the project goes, with both */
    assert_int_equal(db_workload_get(f->tmp.db, "", &got), DB_ENOTFOUND);
    {
        struct db_wl_query q;
        struct db_workload *list = NULL;
        int k = 0;
        memset(&q, 0, sizeof(q));
        q.limit = 10;
        assert_int_equal(db_workload_list(f->tmp.db, &q, &list, &k), DB_OK);
        assert_int_equal(k, 1);
        assert_int_equal(db_workload_act(f->tmp.db, list[0].seq, DB_WL_DELETE, "t", 6000), DB_OK);
        db_workloads_free(list, k);
    }
    assert_int_equal(db_queue_delete(f->tmp.db, f->proj.seq, &seqs, &n), DB_OK);
    assert_int_equal(n, 2);
    free(seqs);
    assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_ENOTFOUND);
    db_workload_clear(&w);
    f->proj.seq = 0;
    assert_int_equal(db_queue_insert(f->tmp.db, &f->proj), DB_OK);
    assert_int_equal(submit(f, "after", 1, &w), DB_OK);
    assert_true(w.seq > live_seq);
    assert_int_equal(db_workload_get(f->tmp.db, w.id, &got), DB_OK);
    assert_int_equal(got.seq, w.seq);
    assert_int_equal(got.queued_seq, w.seq);
    db_workload_clear(&got);
    db_workload_clear(&w);
    db_workload_clear(&old);
}

/* The audit log's retention: a batch's write deletes the rows older than
 * the bound it is given (0: none), and only those. */
static void test_audit_purge(void **state)
{
    static const int64_t at[] = {1000, 2000, 3000};
    struct fixture *f = *state;
    struct db_audit rows[3], batch, *got = NULL;
    int n = 0, truncated = 0, i;

    memset(rows, 0, sizeof(rows));
    for (i = 0; i < 3; i++) {
        db_uuid_new(rows[i].id);
        rows[i].at_ms = at[i];
        snprintf(rows[i].subject, sizeof(rows[i].subject), "user-%d", i);
        strcpy(rows[i].method, "POST");
        rows[i].status = 202;
    }
    assert_int_equal(db_audit_insert(f->tmp.db, rows, 3, 0), DB_OK);
    batch = rows[2];
    db_uuid_new(batch.id);
    batch.at_ms = 4000;
    /* older than 2500: the first two go, the third and the batch stay */
    assert_int_equal(db_audit_insert(f->tmp.db, &batch, 1, 2500), DB_OK);
    assert_int_equal(db_audit_list(f->tmp.db, 0, 10000, 10, &got, &n, &truncated), DB_OK);
    assert_int_equal(n, 2);
    assert_false(truncated);
    assert_true(got[0].at_ms == 3000 && got[1].at_ms == 4000);
    assert_string_equal(got[0].subject, "user-2");
    free(got);
}

static void test_samples(void **state)
{
    struct fixture *f = *state;
    struct db_sample in[3], *out = NULL;
    int n = 0;

    memset(in, 0, sizeof(in));
    in[0].queue_seq = in[1].queue_seq = in[2].queue_seq = f->proj.seq;
    in[0].pool_seq = in[1].pool_seq = in[2].pool_seq = f->pool.seq;
    in[0].ts = 1000;
    in[1].ts = 2000;
    in[2].ts = 3000;
    in[0].alloc[0] = 1000;
    in[1].alloc[0] = 3000;
    in[2].alloc[0] = 2000;
    in[2].quota[0] = -1;
    assert_int_equal(db_samples_add(f->tmp.db, in, 3, 0), DB_OK);
    assert_int_equal(db_samples_get(f->tmp.db, f->proj.seq, 0, 1500, 3000, &out, &n), DB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(out[0].alloc[0], 3000);
    assert_int_equal(out[1].quota[0], -1); /* unlimited stays unlimited when summed */
    free(out);
    assert_int_equal(db_samples_buckets(f->tmp.db, 0, 10000, &out, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(out[0].alloc[0], 2000); /* the average of the bucket */
    free(out);
    /* retention: everything before 2500 goes */
    assert_int_equal(db_samples_add(f->tmp.db, in + 2, 1, 2500), DB_OK);
    assert_int_equal(db_samples_get(f->tmp.db, f->proj.seq, f->pool.seq, 0, 10000, &out, &n), DB_OK);
    assert_int_equal(n, 1);
    free(out);
}

/* A sample's points in one write (db_series_add_turn() without a budget);
 * *held_us: how long the writer ran it. */
static int series_add_whole(struct db *db, const struct db_point *p, int n,
                            int64_t keep_after_ms, int64_t *held_us)
{
    struct db_series_turns t = {p, n, keep_after_ms, 0, 0, 0, 0, 0};
    int rc = db_series_add_turn(db, &t);

    *held_us = t.held_us;
    return rc == DB_OK && !t.whole ? DB_EIO : rc;
}

/* Series points (in one write): a sample of thousands of points loses
 * none and says how long the writer ran it; the prune keeps each series'
 * latest point unless it is 0. */
static void test_series_add_prune(void **state)
{
    enum { N = 6000 };
    static const struct {
        const char *entity;
        int n; /* points it should have between 0 and 3000 after the prune */
    } want[] = {{"e0", 0}, {"e1", 1}, {"e2999", 1}, {"e5998", 0}, {"e5999", 1}, {"new", 1}};
    struct fixture *f = *state;
    struct db_point *p = calloc(N, sizeof(*p)), *out = NULL;
    int64_t held = -1;
    size_t k;
    int i, n = 0;

    assert_non_null(p);
    for (i = 0; i < N; i++) {
        p[i].kind = DB_SERIES_NODE;
        snprintf(p[i].entity, sizeof(p[i].entity), "e%d", i);
        strcpy(p[i].metric, "GPU_UTILIZATION");
        p[i].ts = 1000;
        p[i].value = i % 2; /* even series end at 0: pruned */
    }
    assert_int_equal(series_add_whole(f->tmp.db, p, N, 0, &held), DB_OK);
    assert_true(held > 0);
    assert_int_equal(db_series_get(f->tmp.db, DB_SERIES_NODE, "e5998", "GPU_UTILIZATION", 0, 3000,
                                   &out, &n), DB_OK);
    assert_int_equal(n, 1);
    free(out);
    out = NULL;
    strcpy(p[0].entity, "new");
    p[0].ts = 2000;
    assert_int_equal(series_add_whole(f->tmp.db, p, 1, 1500, &held), DB_OK);
    for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        n = -1;
        assert_int_equal(db_series_get(f->tmp.db, DB_SERIES_NODE, want[k].entity, "GPU_UTILIZATION",
                                       0, 3000, &out, &n), DB_OK);
        assert_int_equal(n, want[k].n);
        free(out);
        out = NULL;
    }
    free(p);
}

/* The points of the exactness tests: values to the last bit, names with
 * quotes, backslashes and bytes over 0x7f, keys given twice (inside a
 * statement's rows, across two, across a statement and a single row, and
 * across two PostgreSQL statements); want[i]: the value point i's key
 * must end with. EXACT_N points: SQLite's rows of many then the rest one
 * by one; on PostgreSQL two statements. */
enum { EXACT_N = 1100 };
static void exact_points(struct db_point *p, double *want, int64_t ts)
{
    static const double vals[] = {0.1, 1.0 / 3, -2.5e-300, 4.9e-324, 1.7976931348623157e308,
                                  123456789.125, -0.75, 1e21, 0.30000000000000004, 7};
    static const char *const names[] = {"a\"b", "c\\d", "\xc3\xa9t\xc3\xa9", "tab\tx", "e"};
    static const struct {
        int i;        /* a point given again as point `again` with value v */
        int again;
        double v;
    } dup[] = {{5, 9, 42.5}, {100, 200, -1.25}, {250, 299, 3.0}, {1000, 1050, -8.5},
               {1023, 1090, 0.5}};
    size_t d;
    int i;

    for (i = 0; i < EXACT_N; i++) {
        p[i].kind = DB_SERIES_WORKLOAD;
        snprintf(p[i].entity, sizeof(p[i].entity), "%s%d", names[i % 5], i);
        strcpy(p[i].metric, i % 2 ? "GPU_ALLOCATION" : "RUNNING_POD_COUNT");
        snprintf(p[i].label, sizeof(p[i].label), "%s", i % 3 ? "" : "7");
        p[i].ts = ts;
        p[i].value = vals[i % 10] * (i + 1);
    }
    for (d = 0; d < sizeof(dup) / sizeof(dup[0]); d++) {
        p[dup[d].again] = p[dup[d].i];
        p[dup[d].again].value = dup[d].v;
    }
    for (i = 0; i < EXACT_N; i++)
        want[i] = p[i].value;
    for (d = 0; d < sizeof(dup) / sizeof(dup[0]); d++)
        want[dup[d].i] = dup[d].v;
}

/* Every point's series holds exactly one point, at ts, of value want[i]. */
static void exact_check(struct db *db, const struct db_point *p, const double *want, int64_t ts)
{
    struct db_point *out = NULL;
    int i, n;

    for (i = 0; i < EXACT_N; i++) {
        n = -1;
        assert_int_equal(db_series_get(db, p[i].kind, p[i].entity, p[i].metric, 0, 9000, &out,
                                       &n), DB_OK);
        assert_int_equal(n, 1);
        assert_string_equal(out[0].label, p[i].label);
        assert_true(out[0].ts == ts);
        assert_memory_equal(&out[0].value, &want[i], sizeof(double));
        free(out);
        out = NULL;
    }
}

/* Series points stored by rows of many (in one write) read back exactly
 * as written one by one would, and a key written again in a second call
 * takes its value. */
static void test_series_add_exact(void **state)
{
    struct fixture *f = *state;
    struct db_point *p = calloc(EXACT_N, sizeof(*p));
    double *want = calloc(EXACT_N, sizeof(*want));
    int64_t held;

    assert_true(p && want);
    exact_points(p, want, 5000);
    p[0].value = -1; /* replaced by the second call */
    assert_int_equal(series_add_whole(f->tmp.db, p, EXACT_N, 0, &held), DB_OK);
    p[0].value = want[0];
    assert_int_equal(series_add_whole(f->tmp.db, p, 1, 0, &held), DB_OK);
    exact_check(f->tmp.db, p, want, 5000);
    free(p);
    free(want);
}

/* Number of points of p's series between 0 and 9000. */
static int series_count(struct db *db, const struct db_point *p)
{
    struct db_point *out = NULL;
    int n = -1;

    assert_int_equal(db_series_get(db, p->kind, p->entity, p->metric, 0, 9000, &out, &n), DB_OK);
    free(out);
    return n;
}

/* Points by entity, then label (one kind and metric). */
static int point_key_cmp(const void *a, const void *b)
{
    const struct db_point *x = a, *y = b;
    int c = strcmp(x->entity, y->entity);

    return c ? c : strcmp(x->label, y->label);
}

/* A sample written in turns (db_series_add_turn, a statement a turn)
 * stores the same rows as in one write; no reader sees it before its last
 * turn; a sample cut short (turns written, the last never) stays unread
 * and the next sample's first turn deletes it. */
static void test_series_add_turns(void **state)
{
    struct fixture *f = *state;
    struct db_point *p = calloc(EXACT_N, sizeof(*p));
    double *want = calloc(EXACT_N, sizeof(*want));
    struct db_series_turns t;
    int turns = 0;

    assert_true(p && want);
    exact_points(p, want, 5000);
    t = (struct db_series_turns){p, EXACT_N, 0, 1, 0, 0, 0, 0};
    assert_int_equal(db_series_add_turn(f->tmp.db, &t), DB_OK);
    assert_false(t.whole);
    assert_true(t.done > 0 && t.done < EXACT_N && t.held_us > 0);
    assert_int_equal(series_count(f->tmp.db, &p[0]), 0); /* written, not yet read */
    for (turns = 1; !t.whole; turns++)
        assert_int_equal(db_series_add_turn(f->tmp.db, &t), DB_OK);
    assert_true(turns > 1 && t.done == EXACT_N);
    exact_check(f->tmp.db, p, want, 5000);
    /* a sample at 6000 cut short after its first turn, then one at 7000 */
    p[0].ts = 6000;
    t = (struct db_series_turns){p, EXACT_N, 0, 1, 0, 0, 0, 0};
    assert_int_equal(db_series_add_turn(f->tmp.db, &t), DB_OK);
    assert_false(t.whole);
    assert_int_equal(series_count(f->tmp.db, &p[0]), 1);
    t = (struct db_series_turns){p + 1, 1, 0, 1, 0, 0, 0, 0};
    p[1].ts = 7000;
    assert_int_equal(db_series_add_turn(f->tmp.db, &t), DB_OK);
    assert_true(t.whole);
    assert_int_equal(series_count(f->tmp.db, &p[0]), 1); /* the point at 6000 is gone */
    assert_int_equal(series_count(f->tmp.db, &p[1]), 2);
    free(p);
    free(want);
}

/* The point in force of every series after the last sample written whole
 * (what a recorder that starts compares with): a series' latest point,
 * not the ones before it; a point of a sample cut short is not read; the
 * sample's mark is not a series. */
static void test_series_latest(void **state)
{
    static const struct {
        const char *entity, *label;
        int64_t ts;
        double value;
    } in[] = {
        {"n1", "0", 1000, 1}, {"n1", "0", 2000, 0.5}, /* changed: the later one */
        {"n1", "1", 1000, 2},                         /* unchanged since 1000 */
        {"n2", "", 2000, 0},                          /* a 0 is a value in force */
    };
    struct fixture *f = *state;
    struct db_point p[4], *out = NULL, *cut;
    struct db_series_turns t;
    int64_t held;
    int i, n = 0;

    memset(p, 0, sizeof(p));
    for (i = 0; i < 4; i++) {
        p[i].kind = DB_SERIES_NODE;
        snprintf(p[i].entity, sizeof(p[i].entity), "%s", in[i].entity);
        strcpy(p[i].metric, "GPU_ALLOCATION_PER_GPU");
        snprintf(p[i].label, sizeof(p[i].label), "%s", in[i].label);
        p[i].ts = in[i].ts;
        p[i].value = in[i].value;
    }
    assert_int_equal(db_series_latest(f->tmp.db, &out, &n), DB_OK);
    assert_int_equal(n, 0);
    free(out);
    assert_int_equal(series_add_whole(f->tmp.db, p, 1, 0, &held), DB_OK); /* the sample at 1000 */
    assert_int_equal(series_add_whole(f->tmp.db, p + 2, 1, 0, &held), DB_OK);
    assert_int_equal(series_add_whole(f->tmp.db, p + 1, 1, 0, &held), DB_OK); /* at 2000 */
    assert_int_equal(series_add_whole(f->tmp.db, p + 3, 1, 0, &held), DB_OK);
    /* a sample at 3000 cut short after its first turn: written, never marked
     * (more points than one statement writes in either store) */
    assert_non_null(cut = calloc(EXACT_N, sizeof(*cut)));
    for (i = 0; i < EXACT_N; i++) {
        cut[i] = p[0];
        snprintf(cut[i].entity, sizeof(cut[i].entity), "c%d", i);
        cut[i].ts = 3000;
    }
    strcpy(cut[0].entity, "n1");
    t = (struct db_series_turns){cut, EXACT_N, 0, 1, 0, 0, 0, 0};
    assert_int_equal(db_series_add_turn(f->tmp.db, &t), DB_OK);
    assert_false(t.whole);
    free(cut);
    out = NULL;
    assert_int_equal(db_series_latest(f->tmp.db, &out, &n), DB_OK);
    assert_int_equal(n, 3);
    qsort(out, (size_t)n, sizeof(*out), point_key_cmp);
    for (i = 0; i < n; i++) {
        int k = i == 0 ? 1 : i + 1; /* n1/0 at 2000, n1/1 at 1000, n2 at 2000 */

        assert_int_equal(out[i].kind, DB_SERIES_NODE);
        assert_string_equal(out[i].entity, in[k].entity);
        assert_string_equal(out[i].metric, "GPU_ALLOCATION_PER_GPU");
        assert_string_equal(out[i].label, in[k].label);
        assert_int_equal(out[i].ts, in[k].ts);
        assert_true(out[i].value == in[k].value);
    }
    free(out);
}

/* Each test on a fresh fixture: setup before, teardown after. */
#define DB_TEST(t) cmocka_unit_test_setup_teardown(t, setup, tmpdb_teardown)

RUN_TESTS(
    DB_TEST(test_list_memo),
    DB_TEST(test_pools),
    DB_TEST(test_partial_reads),
    DB_TEST(test_snapshot_shared),
    DB_TEST(test_samples),
    DB_TEST(test_series_add_prune),
    DB_TEST(test_series_add_exact),
    DB_TEST(test_series_add_turns),
    DB_TEST(test_series_latest),
    cmocka_unit_test(test_time_parse),
    cmocka_unit_test(test_ids),
    cmocka_unit_test(test_in_lists_flattened),
    DB_TEST(test_purge),
    DB_TEST(test_audit_purge),
    DB_TEST(test_schema_and_queues),
    DB_TEST(test_checks),
    DB_TEST(test_pending_caps),
    DB_TEST(test_group_set_answers),
    DB_TEST(test_pending_caps_batch_resume),
    DB_TEST(test_submitted_hook),
    DB_TEST(test_audit_batch_again),
    DB_TEST(test_pending_caps_respec),
    DB_TEST(test_refresh_families),
    DB_TEST(test_access_keys),
    DB_TEST(test_group_commit),
    DB_TEST(test_lifecycle_and_list),
    DB_TEST(test_list_paging),
    DB_TEST(test_list_statements_cached),
    DB_TEST(test_cycle_apply),
    DB_TEST(test_cycle_apply_texts),
    DB_TEST(test_cycle_apply_turns),
    DB_TEST(test_cycle_turns_yield),
    DB_TEST(test_reasons_apply),
    DB_TEST(test_reopen_keeps_rows)
)
