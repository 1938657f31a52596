/*
 * test_model.c: the scheduler thread's in-memory state (control/sched_model.c)
 * against a real database: loaded whole, then kept equal to the database
 * by re-reading only the workloads named, whatever mix of submissions,
 * suspensions, resumptions and deletions they went through, and through a
 * topology reload; with keep_left, the workloads that leave stay in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "db.h"
#include "sched_model.h"

static char dir[64], path[128];
static struct db *db;
static struct db_queue proj;
static struct db_pool pool;

static void insert_gpus(const char *name, int gpus, struct db_workload *w)
{
    memset(w, 0, sizeof(*w));
    snprintf(w->name, sizeof(w->name), "%s", name);
    w->project_seq = proj.seq;
    strcpy(w->priority_class, "train");
    w->priority = 50;
    w->preemptible = 1;
    w->n_pods = w->min_pods = 1;
    w->gpu_devices = gpus;
    assert_int_equal(db_workload_insert(db, w), DB_OK);
}

static void insert(const char *name, struct db_workload *w)
{
    insert_gpus(name, 1, w);
}

/* The model holds exactly the live Pending/Running workloads, by seq. */
static void check_equal(struct sched_model *m)
{
    struct db_snapshot *s = NULL;
    int i;

    assert_int_equal(db_snapshot_load(db, &s), DB_OK);
    assert_int_equal(m->n, s->n_workloads);
    for (i = 0; i < m->n; i++) {
        int k;
        if (i > 0)
            assert_true(m->meta[i - 1].seq < m->meta[i].seq);
        for (k = 0; k < s->n_workloads && s->workloads[k].seq != m->meta[i].seq; k++)
            ;
        assert_true(k < s->n_workloads);
        assert_string_equal(m->wls[i].name, s->workloads[k].name);
        assert_int_equal(m->wls[i].queued_seq, s->workloads[k].queued_seq);
        assert_int_equal(m->wls[i].queue, sm_queue_index(m, proj.seq));
    }
    db_snapshot_free(s);
}

static void test_model_follows_db(void **state)
{
    struct sched_model m;
    struct db_workload w[16];
    struct db_pool p;
    int64_t seqs[16];
    char name[16];
    int i, n = 0;

    (void)state;
    memset(&m, 0, sizeof(m));
    for (i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "w%d", i);
        insert(name, &w[i]);
    }
    assert_int_equal(sm_load(&m, db), DB_OK);
    check_equal(&m);
    /* suspend 3 and 5, delete 7, resume 3, submit three more */
    assert_int_equal(db_workload_act(db, w[3].seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    assert_int_equal(db_workload_act(db, w[5].seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    assert_int_equal(db_workload_act(db, w[7].seq, DB_WL_DELETE, "t", 1), DB_OK);
    assert_int_equal(db_workload_act(db, w[3].seq, DB_WL_RESUME, "t", 1), DB_OK);
    for (i = 10; i < 13; i++) {
        snprintf(name, sizeof(name), "w%d", i);
        insert(name, &w[i]);
    }
    seqs[n++] = w[12].seq;
    seqs[n++] = w[3].seq;
    seqs[n++] = w[5].seq;
    seqs[n++] = w[7].seq;
    seqs[n++] = w[10].seq;
    seqs[n++] = w[11].seq;
    seqs[n++] = w[3].seq; /* twice */
    seqs[n++] = 999999;   /* never existed */
    assert_int_equal(sm_refresh(&m, db, seqs, n), DB_OK);
    assert_int_equal(m.n, 11);
    check_equal(&m);
    /* resume 5 (an older seq, merged into the middle) */
    assert_int_equal(db_workload_act(db, w[5].seq, DB_WL_RESUME, "t", 1), DB_OK);
    seqs[0] = w[5].seq;
    assert_int_equal(sm_refresh(&m, db, seqs, 1), DB_OK);
    assert_int_equal(m.n, 12);
    check_equal(&m);
    /* a new pool: the topology is re-read, the workloads keep their places */
    memset(&p, 0, sizeof(p));
    strcpy(p.name, "extra");
    strcpy(p.label_key, "k");
    strcpy(p.label_value, "extra");
    assert_int_equal(db_pool_insert(db, &p), DB_OK);
    assert_int_equal(sm_load_topology(&m, db), DB_OK);
    assert_int_equal(m.n_pools, 2);
    check_equal(&m);
    sm_free(&m);
    for (i = 0; i < 13; i++)
        db_workload_clear(&w[i]);
}

/* The scheduler thread's Step 1: rows read and new entries built before
 * the model lock (sm_rows_build), taken in under it (sm_rows_take); a
 * workload changed after its row was read is read again after the take,
 * and wins. */
static void test_model_built_then_taken(void **state)
{
    struct sched_model m;
    struct db_workload w[6];
    struct db_snapshot *rows = NULL;
    struct sm_built b;
    int64_t seqs[3];
    char name[16];
    int i;

    (void)state;
    memset(&m, 0, sizeof(m));
    for (i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "b%d", i);
        insert(name, &w[i]);
    }
    assert_int_equal(sm_load(&m, db), DB_OK);
    /* touched: b1 suspended, two submissions */
    assert_int_equal(db_workload_act(db, w[1].seq, DB_WL_SUSPEND, "t", 1), DB_OK);
    for (i = 3; i < 5; i++) {
        snprintf(name, sizeof(name), "b%d", i);
        insert(name, &w[i]);
    }
    seqs[0] = w[1].seq;
    seqs[1] = w[3].seq;
    seqs[2] = w[4].seq;
    assert_int_equal(db_workloads_load(db, seqs, 3, &rows), DB_OK);
    assert_int_equal(sm_rows_build(&m, seqs, 3, rows, &b), DB_OK);
    /* the two new entries follow the model's last seq: staged past its
     * length before the lock (Invariant 6), taken in by the count */
    assert_int_equal(b.n_add, 0);
    assert_int_equal(b.n_staged, 2);
    assert_int_equal(m.n, 3); /* the model is unchanged until the take */
    /* b3 deleted after its row was read: touched again */
    assert_int_equal(db_workload_act(db, w[3].seq, DB_WL_DELETE, "t", 1), DB_OK);
    insert("b5", &w[5]);
    assert_int_equal(sm_rows_take(&m, &b), DB_OK);
    assert_int_equal(b.n_add, 0);
    assert_int_equal(b.n_staged, 0);
    assert_int_equal(m.n, 4); /* b0 b2 b3 b4: b1 dropped, the staged ones moved down */
    sm_built_free(&b);   /* what the take replaced (the mix window), as after the lock */
    seqs[0] = w[3].seq;
    seqs[1] = w[5].seq;
    assert_int_equal(sm_refresh(&m, db, seqs, 2), DB_OK);
    check_equal(&m);
    assert_int_equal(m.n, 4);
    /* built and dropped: the model is untouched, nothing leaks */
    assert_int_equal(sm_rows_build(&m, seqs, 2, rows, &b), DB_OK);
    sm_built_free(&b);
    check_equal(&m);
    db_snapshot_free(rows);
    sm_free(&m);
    for (i = 0; i < 6; i++)
        db_workload_clear(&w[i]);
}

/* Step 1 with a submission touched a turn late (its seq below the model's
 * last): the later new entries are staged past the model's length before
 * the lock, after room for the earlier one, which is merged in under it;
 * the model stays ordered by seq. Then the same when an entry is dropped
 * in that take (the staged ones move down). */
static void take_built(struct sched_model *m, const int64_t *seqs, int n, int early, int staged)
{
    struct db_snapshot *rows = NULL;
    struct sm_built b;

    assert_int_equal(db_workloads_load(db, seqs, n, &rows), DB_OK);
    assert_int_equal(sm_rows_build(m, seqs, n, rows, &b), DB_OK);
    assert_int_equal(b.n_add, early);
    assert_int_equal(b.n_staged, staged);
    assert_int_equal(sm_rows_take(m, &b), DB_OK);
    assert_int_equal(b.n_staged, 0);
    sm_built_free(&b);
    db_snapshot_free(rows);
}

static void test_model_late_submission(void **state)
{
    struct sched_model m;
    struct db_workload w[8];
    int64_t seqs[3];
    char name[16];
    int i;

    (void)state;
    memset(&m, 0, sizeof(m));
    insert("c0", &w[0]);
    assert_int_equal(sm_load(&m, db), DB_OK);
    for (i = 1; i < 5; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        insert(name, &w[i]);
    }
    seqs[0] = w[2].seq;   /* c2 first: c1 is touched a turn late */
    take_built(&m, seqs, 1, 0, 1);
    seqs[0] = w[1].seq;
    seqs[1] = w[3].seq;
    seqs[2] = w[4].seq;
    take_built(&m, seqs, 3, 1, 2);   /* c1 merged in, c3 c4 staged */
    assert_int_equal(m.n, 5);
    check_equal(&m);
    /* c0 deleted in the take that brings c5 c6 in */
    assert_int_equal(db_workload_act(db, w[0].seq, DB_WL_DELETE, "t", 1), DB_OK);
    insert("c5", &w[5]);
    insert("c6", &w[6]);
    seqs[0] = w[0].seq;
    seqs[1] = w[5].seq;
    seqs[2] = w[6].seq;
    take_built(&m, seqs, 3, 0, 2);
    assert_int_equal(m.n, 6);
    check_equal(&m);
    sm_free(&m);
    for (i = 0; i < 7; i++)
        db_workload_clear(&w[i]);
}

/* The mix window (Invariant 4): the new entries of a take are noted in a
 * copy before the lock, which the take swaps in, in the order the take
 * would note them; the model's mix is then the one of the same workloads
 * loaded whole. And a window that changed between build and take (a
 * reload) is not replaced: the take notes the entries itself. */
static void check_mix_as_loaded(struct sched_model *m)
{
    struct sched_model fresh;
    const struct sched_mix_entry *a, *b;
    int n, k;

    memset(&fresh, 0, sizeof(fresh));
    assert_int_equal(sm_load(&fresh, db), DB_OK);
    n = sched_mix_window_get(m->mix, &a);
    assert_int_equal(n, sched_mix_window_get(fresh.mix, &b));
    for (k = 0; k < n; k++) {
        assert_int_equal(a[k].shape.gpu_devices, b[k].shape.gpu_devices);
        assert_int_equal(a[k].weight, b[k].weight);
    }
    sm_free(&fresh);
}

static void test_model_mix_noted_aside(void **state)
{
    static const int gpus[] = {1, 2, 2, 4, 4, 4};
    struct sched_model m;
    struct sched_mix_window *before;
    struct db_workload w[6];
    struct db_snapshot *rows = NULL;
    struct sm_built b;
    int64_t seqs[6];
    char name[16];
    int i;

    (void)state;
    memset(&m, 0, sizeof(m));
    insert("m0", &w[0]);
    assert_int_equal(sm_load(&m, db), DB_OK);
    for (i = 1; i < 6; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        insert_gpus(name, gpus[i], &w[i]);
        seqs[i - 1] = w[i].seq;
    }
    assert_int_equal(db_workloads_load(db, seqs, 3, &rows), DB_OK);
    assert_int_equal(sm_rows_build(&m, seqs, 3, rows, &b), DB_OK);
    assert_non_null(b.mix);   /* noted before the lock */
    before = m.mix;
    assert_int_equal(sm_rows_take(&m, &b), DB_OK);
    assert_ptr_not_equal(m.mix, before);
    assert_ptr_equal(b.mix, before);   /* the replaced window, freed with b */
    sm_built_free(&b);
    db_snapshot_free(rows);
    /* a window changed between build and take: its own is kept, noted here */
    assert_int_equal(db_workloads_load(db, seqs + 3, 2, &rows), DB_OK);
    assert_int_equal(sm_rows_build(&m, seqs + 3, 2, rows, &b), DB_OK);
    before = m.mix;
    assert_non_null(m.mix = sched_mix_window_copy(before));
    sched_mix_window_free(before);
    before = m.mix;
    assert_int_equal(sm_rows_take(&m, &b), DB_OK);
    assert_ptr_equal(m.mix, before);
    sm_built_free(&b);
    db_snapshot_free(rows);
    check_equal(&m);
    check_mix_as_loaded(&m);
    sm_free(&m);
    for (i = 0; i < 6; i++)
        db_workload_clear(&w[i]);
}

/* keep_left (the scheduler thread's): a workload that stops being live,
 * pending or holding pods, stays at its index as a departure with every
 * pod off its node until sm_drop_left(); a clone leaves it out. */
static void test_model_keeps_left(void **state)
{
    static const struct {
        const char *name;
        int running, act; /* placed on node 0 by the model's cycle; then what the API does */
    } cases[] = {
        {"k0", 1, DB_WL_SUSPEND},
        {"k1", 0, DB_WL_SUSPEND},
        {"k2", 1, DB_WL_DELETE},
        {"k3", 0, -1},
        {"k4", 0, DB_WL_DELETE},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    struct sched_model m, c;
    struct db_workload w[N];
    struct db_node node;
    int64_t seqs[N];
    int i, n = 0, left = 0;

    (void)state;
    memset(&m, 0, sizeof(m));
    memset(&node, 0, sizeof(node));
    strcpy(node.name, "n0");
    node.pool_seq = pool.seq;
    node.n_gpus = 2;
    node.ready = 1;
    assert_int_equal(db_node_upsert(db, &node), DB_OK);
    for (i = 0; i < N; i++)
        insert(cases[i].name, &w[i]);
    assert_int_equal(sm_load(&m, db), DB_OK);
    assert_int_equal(m.n_nodes, 1);
    m.keep_left = 1;
    for (i = 0; i < N; i++) {
        if (cases[i].running) {
            m.wls[i].phase = SCHED_RUNNING;
            m.wls[i].pods[0].node = 0;
            m.wls[i].pods[0].devices = 1ULL << i % 2;
        }
        if (cases[i].act >= 0) {
            assert_int_equal(db_workload_act(db, w[i].seq, cases[i].act, "t", 1), DB_OK);
            seqs[n++] = w[i].seq;
            left++;
        }
    }
    assert_int_equal(sm_refresh(&m, db, seqs, n), DB_OK);
    assert_int_equal(m.n, N);
    assert_int_equal(m.n_left, left);
    for (i = 0; i < N; i++) {
        int gone = cases[i].act >= 0;
        assert_int_equal(m.meta[i].seq, w[i].seq);
        assert_int_equal(m.meta[i].left, gone);
        assert_int_equal(m.wls[i].phase, gone ? SCHED_COMPLETED
                                              : cases[i].running ? SCHED_RUNNING : SCHED_PENDING);
        assert_int_equal(m.wls[i].pods[0].node, gone || !cases[i].running ? -1 : 0);
        assert_int_equal(m.wls[i].stale_since_ms, SCHED_NO_TIME);
    }
    /* deleted after its suspension: still the same entry */
    assert_int_equal(db_workload_act(db, w[0].seq, DB_WL_DELETE, "t", 1), DB_OK);
    assert_int_equal(sm_refresh(&m, db, seqs, 1), DB_OK);
    assert_int_equal(m.n_left, left);
    assert_int_equal(sm_workload_index(&m, w[0].seq), 0);
    assert_int_equal(sm_clone(&m, &c), DB_OK);
    assert_int_equal(c.n, N - left);
    check_equal(&c);
    sm_free(&c);
    sm_drop_left(&m);
    assert_int_equal(m.n_left, 0);
    check_equal(&m);
    sm_free(&m);
    for (i = 0; i < N; i++)
        db_workload_clear(&w[i]);
}

/* One update of a workload's row as a cycle writes it: phase, reason
 * and message, started time. */
static void write_row(struct sched_model *m, int at, const char *phase, const char *message,
                      int64_t started_ms)
{
    struct db_wl_update u;
    struct db_cycle c;
    int applied = 0;

    memset(&u, 0, sizeof(u));
    memset(&c, 0, sizeof(c));
    u.seq = m->meta[at].seq;
    u.version = m->meta[at].version;
    u.phase = phase;
    u.phase_reason = "";
    u.phase_message = message;
    u.started_ms = started_ms;
    c.now_ms = 1;
    c.updates = &u;
    c.n_updates = 1;
    assert_int_equal(db_cycle_apply(db, &c, &applied), DB_OK);
    assert_int_equal(applied, 1);
}

/* Invariant 7: a workload read again is marked changed only when what the
 * core reads of it changed (its message is the API's alone), and the mark
 * stays through later reads that change nothing. */
static void test_model_reread_same(void **state)
{
    static const struct {
        const char *message;
        int64_t started_ms;
        int changed;   /* marked after this read */
    } reads[] = {
        {"", 0, 0},           /* read again as it was */
        {"waiting", 0, 0},    /* a message alone */
        {"waiting", 5000, 1}, /* a start time: the core reads it */
        {"waiting", 5000, 1}, /* unchanged since, still not told */
    };
    struct sched_model m;
    struct db_workload w;
    size_t i;

    (void)state;
    memset(&m, 0, sizeof(m));
    insert("r0", &w);
    assert_int_equal(sm_load(&m, db), DB_OK);
    m.keep_left = 1;
    for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        write_row(&m, 0, "Pending", reads[i].message, reads[i].started_ms);
        assert_int_equal(sm_refresh(&m, db, &w.seq, 1), DB_OK);
        assert_int_equal(m.n, 1);
        assert_int_equal(m.meta[0].left, 0);
        assert_int_equal(m.meta[0].reread_changed, reads[i].changed);
    }
    m.meta[0].reread_changed = 0;   /* told (a full delta) */
    assert_int_equal(sm_refresh(&m, db, &w.seq, 1), DB_OK);
    assert_int_equal(m.meta[0].reread_changed, 0);
    sm_free(&m);
    db_workload_clear(&w);
}

static int setup(void **state)
{
    struct db_queue dept;

    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/allot-test-model-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/m.db", dir);
    if (db_open(path, DB_OPEN_CREATE, &db) != DB_OK)
        return -1;
    memset(&pool, 0, sizeof(pool));
    strcpy(pool.name, "default");
    strcpy(pool.label_key, "k");
    strcpy(pool.label_value, "v");
    memset(&dept, 0, sizeof(dept));
    dept.kind = DB_DEPARTMENT;
    strcpy(dept.name, "default");
    memset(&proj, 0, sizeof(proj));
    proj.kind = DB_PROJECT;
    strcpy(proj.name, "p");
    if (db_pool_insert(db, &pool) != DB_OK || db_queue_insert(db, &dept) != DB_OK)
        return -1;
    proj.parent_seq = dept.seq;
    return db_queue_insert(db, &proj) == DB_OK ? 0 : -1;
}

static int teardown(void **state)
{
    char p[160];

    (void)state;
    db_close(db);
    snprintf(p, sizeof(p), "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s.lock", path);
    unlink(p);
    unlink(path);
    rmdir(dir);
    return 0;
}

RUN_TESTS(
    cmocka_unit_test_setup_teardown(test_model_follows_db, setup, teardown),
    cmocka_unit_test_setup_teardown(test_model_built_then_taken, setup, teardown),
    cmocka_unit_test_setup_teardown(test_model_late_submission, setup, teardown),
    cmocka_unit_test_setup_teardown(test_model_mix_noted_aside, setup, teardown),
    cmocka_unit_test_setup_teardown(test_model_keeps_left, setup, teardown),
    cmocka_unit_test_setup_teardown(test_model_reread_same, setup, teardown)
)
