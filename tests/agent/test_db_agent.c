/*
 * test_db_agent.c: the storage behind allot-agent, without HTTP: token
 * binding and name conflicts at registration, and what heartbeats do to a
 * workload bound to an agent's node (Initializing -> Running -> Completed
 * or Failed, lost pods back to Pending, reports from another node ignored),
 * lost nodes after missed heartbeats, uids kept by unchanged pods, the GPU
 * figures of running pods (devices given or not, idle streaks, figures
 * cleared), the rendezvous ports of distributed workloads in the range
 * allotd is given; plus the token hash's test vectors. Each test uses its
 * own temporary database.
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

#include "agent_int.h"
#include "db.h"
#include "db_agent.h"
#include "tmpdb.h"

struct fixture {
    struct tmpdb tmp;             /* first: tmpdb_teardown frees the fixture */
    struct db_pool pool;
    struct db_queue dept, proj;
    struct db_agent_token tok, other;
    struct db_agent_reg reg;
};

static int token(struct fixture *f, struct db_agent_token *t, const char *id)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->id, sizeof(t->id), "%s", id);
    snprintf(t->name, sizeof(t->name), "%s", id);
    snprintf(t->secret_hash, sizeof(t->secret_hash), "%064d", 0);
    return db_agent_token_insert(f->tmp.db, t);
}

static void reg_of(const struct db_agent_token *t, const char *name, struct db_agent_reg *r)
{
    memset(r, 0, sizeof(*r));
    r->token_seq = t->seq;
    snprintf(r->name, sizeof(r->name), "%s", name);
    snprintf(r->pool, sizeof(r->pool), "default");
    r->n_gpus = 2;
    r->cpu_milli = r->mem_mib = -1;
    r->heartbeat_ms = 200;
    r->labels = "{}";
    r->gpus = "[]";
    r->now_ms = 1000;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f || tmpdb_open("agent", 0, &f->tmp) != 0 ||
        tmpdb_org(f->tmp.db, -1, &f->pool, &f->dept, &f->proj) != DB_OK ||
        token(f, &f->tok, "tok1") != DB_OK || token(f, &f->other, "tok2") != DB_OK)
        return -1;
    reg_of(&f->tok, "node-a", &f->reg);
    if (db_agent_register(f->tmp.db, &f->reg) != DB_OK)
        return -1;
    *state = f;
    return 0;
}

/* A workload of n_pods one-GPU pods placed on node seq `node` (devices 0
 * and 1), in phase `phase`, as a scheduling cycle writes it. */
static int64_t placed_spec(struct fixture *f, const char *name, int n_pods, int64_t node,
                           const char *phase, const char *spec)
{
    struct db_workload w;
    struct db_sched_pod pods[2] = {{node, 1}, {node, 2}};
    struct db_wl_update u;
    struct db_cycle c;
    int applied = 0;

    memset(&w, 0, sizeof(w));
    strcpy(w.name, name);
    w.project_seq = f->proj.seq;
    strcpy(w.priority_class, "train");
    w.priority = 50;
    w.preemptible = 1;
    w.n_pods = w.min_pods = n_pods;
    w.gpu_devices = 1;
    snprintf(w.rules, sizeof(w.rules), "%s", f->proj.scheduling_rules); /* as submitted */
    w.spec = spec ? strdup(spec) : NULL;
    assert_int_equal(db_workload_insert(f->tmp.db, &w), DB_OK);
    free(w.spec);
    w.spec = NULL;
    memset(&u, 0, sizeof(u));
    u.seq = w.seq;
    u.version = w.version;
    u.phase = phase;
    u.phase_reason = u.phase_message = "";
    u.pods_changed = 1;
    u.pods = pods;
    u.n_pods = n_pods;
    memset(&c, 0, sizeof(c));
    c.now_ms = 2000;
    c.updates = &u;
    c.n_updates = 1;
    assert_int_equal(db_cycle_apply(f->tmp.db, &c, &applied), DB_OK);
    assert_int_equal(applied, 1);
    db_workload_clear(&w);
    return w.seq;
}

static int64_t placed(struct fixture *f, const char *name, int n_pods, int64_t node,
                      const char *phase)
{
    return placed_spec(f, name, n_pods, node, phase, NULL);
}

static const char *phase_of(struct fixture *f, const char *name)
{
    static char phase[16];
    struct db_wl_query q;
    struct db_workload *ws = NULL;
    int n = 0;

    memset(&q, 0, sizeof(q));
    q.n_filters = 1;
    strcpy(q.filters[0].field, "name");
    strcpy(q.filters[0].op, "==");
    snprintf(q.filters[0].value, sizeof(q.filters[0].value), "%s", name);
    q.limit = 1;
    assert_int_equal(db_workload_list(f->tmp.db, &q, &ws, &n), DB_OK);
    assert_int_equal(n, 1);
    snprintf(phase, sizeof(phase), "%s", ws[0].phase);
    db_workloads_free(ws, n);
    return phase;
}

static int64_t beat_now = 3000; /* the time of the heartbeats */

/* One heartbeat of token t with the given reports; the uids assigned in
 * `uids` (up to 4). */
static int beat(struct fixture *f, const struct db_agent_token *t,
                const struct db_pod_report *pods, int n, char uids[4][DB_ID_LEN], int *n_uids)
{
    struct db_heartbeat h;
    int rc, i;

    memset(&h, 0, sizeof(h));
    h.token_seq = t->seq;
    h.now_ms = beat_now;
    h.pods = pods;
    h.n_pods = n;
    rc = db_agent_heartbeat(f->tmp.db, &h);
    if (n_uids)
        *n_uids = h.n_assigned;
    for (i = 0; uids && i < h.n_assigned && i < 4; i++)
        snprintf(uids[i], DB_ID_LEN, "%s", h.assigned[i].uid);
    db_heartbeat_clear(&h);
    return rc;
}

static struct db_pod_report report(const char *uid, int state, int code)
{
    struct db_pod_report p;

    memset(&p, 0, sizeof(p));
    snprintf(p.uid, sizeof(p.uid), "%s", uid);
    p.state = state;
    p.exit_code = code;
    return p;
}

static void test_registration(void **state)
{
    struct fixture *f = *state;
    struct db_agent_reg r;
    struct db_agent_token t;
    struct db_node n;

    /* the same token, the same name: fine; another name: its node is node-a */
    reg_of(&f->tok, "node-a", &r);
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_OK);
    assert_int_equal(r.node_seq, f->reg.node_seq);
    reg_of(&f->tok, "node-b", &r);
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_ECONFLICT);
    assert_non_null(strstr(r.why, "belongs to node node-a"));
    /* another token cannot take node-a while the first one is live */
    reg_of(&f->other, "node-a", &r);
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_ECONFLICT);
    /* nor a simulated node's name */
    memset(&n, 0, sizeof(n));
    strcpy(n.name, "sim-1");
    n.pool_seq = f->pool.seq;
    n.simulated = 1;
    n.ready = 1;
    assert_int_equal(db_node_upsert(f->tmp.db, &n), DB_OK);
    reg_of(&f->other, "sim-1", &r);
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_ECONFLICT);
    /* an unknown pool */
    reg_of(&f->other, "node-c", &r);
    strcpy(r.pool, "nope");
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_ENOTFOUND);
    /* once the first token is revoked, another may take node-a over */
    assert_int_equal(db_agent_token_revoke(f->tmp.db, "tok1", 5000), DB_OK);
    assert_int_equal(db_agent_token_revoke(f->tmp.db, "tok1", 5000), DB_ENOTFOUND);
    reg_of(&f->other, "node-a", &r);
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_OK);
    assert_int_equal(db_agent_token_get(f->tmp.db, "tok2", &t), DB_OK);
    assert_string_equal(t.node_name, "node-a");
}

static void test_running_then_completed(void **state)
{
    struct fixture *f = *state;
    char uids[4][DB_ID_LEN], left[4][DB_ID_LEN];
    struct db_pod_report p[2];
    struct db_pod_run run;
    int n = 0;

    placed(f, "w1", 2, f->reg.node_seq, "Initializing");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    assert_int_equal(n, 2);
    assert_string_not_equal(uids[0], uids[1]);
    /* one pod started: still Initializing; both: Running */
    p[0] = report(uids[0], DB_POD_RUNNING, 0);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_string_equal(phase_of(f, "w1"), "Initializing");
    p[1] = report(uids[1], DB_POD_RUNNING, 0);
    assert_int_equal(beat(f, &f->tok, p, 2, NULL, NULL), DB_OK);
    assert_string_equal(phase_of(f, "w1"), "Running");
    assert_int_equal(db_pod_run_get(f->tmp.db, uids[0], &run), DB_OK);
    assert_string_equal(run.node_name, "node-a");
    /* one pod exits 0: not done yet, and it is no longer assigned */
    p[0] = report(uids[0], DB_POD_EXITED, 0);
    assert_int_equal(beat(f, &f->tok, p, 2, left, &n), DB_OK);
    assert_string_equal(phase_of(f, "w1"), "Running");
    assert_int_equal(n, 1);
    assert_string_equal(left[0], uids[1]);
    /* a later report about the ended run changes nothing */
    p[0] = report(uids[0], DB_POD_EXITED, 7);
    assert_int_equal(beat(f, &f->tok, p, 2, NULL, NULL), DB_OK);
    assert_int_equal(db_pod_run_get(f->tmp.db, uids[0], &run), DB_OK);
    assert_string_equal(run.outcome, "Succeeded");
    assert_string_equal(phase_of(f, "w1"), "Running");
    /* the second exits 0: Completed, pods freed */
    p[0] = report(uids[0], DB_POD_EXITED, 0);
    p[1] = report(uids[1], DB_POD_EXITED, 0);
    assert_int_equal(beat(f, &f->tok, p, 2, NULL, &n), DB_OK);
    assert_string_equal(phase_of(f, "w1"), "Completed");
    assert_int_equal(beat(f, &f->tok, NULL, 0, NULL, &n), DB_OK);
    assert_int_equal(n, 0);
}

static void test_failed_and_lost(void **state)
{
    struct fixture *f = *state;
    char uids[4][DB_ID_LEN], old_uid[DB_ID_LEN];
    struct db_pod_report p[1];
    int n = 0;

    /* no retries left (backoffLimit 0): Failed at once */
    placed_spec(f, "w2", 1, f->reg.node_seq, "Initializing", "{\"backoffLimit\":0}");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    p[0] = report(uids[0], DB_POD_EXITED, 3);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_string_equal(phase_of(f, "w2"), "Failed");

    placed(f, "w3", 1, f->reg.node_seq, "Initializing");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    assert_int_equal(n, 1);
    p[0] = report(uids[0], DB_POD_RUNNING, 0);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_string_equal(phase_of(f, "w3"), "Running");
    /* the agent forgets it: lost, back to Pending, unassigned */
    assert_int_equal(beat(f, &f->tok, NULL, 0, NULL, &n), DB_OK);
    assert_string_equal(phase_of(f, "w3"), "Pending");
    assert_int_equal(n, 0);

    /* retries left (the default): restarted under a new uid, not Failed */
    placed(f, "w5", 1, f->reg.node_seq, "Initializing");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    assert_int_equal(n, 1);
    strcpy(old_uid, uids[0]);
    p[0] = report(uids[0], DB_POD_EXITED, 3);
    assert_int_equal(beat(f, &f->tok, p, 1, uids, &n), DB_OK);
    assert_string_equal(phase_of(f, "w5"), "Initializing");
    assert_int_equal(n, 1);
    assert_string_not_equal(uids[0], old_uid);
}

static void test_other_node_ignored(void **state)
{
    struct fixture *f = *state;
    char uids[4][DB_ID_LEN];
    struct db_agent_reg r;
    struct db_pod_report p[1];
    int n = 0;

    reg_of(&f->other, "node-b", &r);
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_OK);
    placed(f, "w4", 1, f->reg.node_seq, "Initializing");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    p[0] = report(uids[0], DB_POD_RUNNING, 0);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    /* node-b's agent claims node-a's pod failed: nothing happens */
    p[0] = report(uids[0], DB_POD_EXITED, 3);
    assert_int_equal(beat(f, &f->other, p, 1, NULL, &n), DB_OK);
    assert_int_equal(n, 0);
    assert_string_equal(phase_of(f, "w4"), "Running");
}

/* The node's figures as the scheduler sees them, and as the list shows. */
static void figures(struct fixture *f, const char *name, char *pool, int *gpus, int *approved,
                    int *requested)
{
    struct db_agent_node *a = NULL;
    int n = 0, i;

    assert_int_equal(db_agent_node_list(f->tmp.db, &a, &n), DB_OK);
    for (i = 0; i < n && strcmp(a[i].name, name) != 0; i++)
        ;
    assert_true(i < n);
    strcpy(pool, a[i].pool_name);
    *gpus = a[i].n_gpus;
    *approved = a[i].approved_gpus;
    *requested = a[i].requested_gpus;
    db_agent_nodes_free(a, n);
}

/* A node's pool and GPU count change only by an admin (db_agent.h). */
static void test_approval(void **state)
{
    static const struct {
        const char *what;
        const char *ask_pool;   /* what the registration asks for */
        int ask_gpus;
        const char *pool;       /* what the node then has */
        int gpus, approved, pending;
    } steps[] = {
        {"the first registration set 2 GPUs in default", "default", 2, "default", 2, 2, 0},
        {"asking for 8 GPUs changes nothing", "default", 8, "default", 2, 2, 1},
        {"asking for another pool changes nothing", "other", 2, "default", 2, 2, 1},
        {"reporting 1 GPU uses 1 at once, approval kept", "default", 1, "default", 1, 2, 1},
        {"back to 2", "default", 2, "default", 2, 2, 0},
    };
    struct fixture *f = *state;
    struct db_pool other;
    struct db_agent_approval ap;
    struct db_agent_token preset;
    struct db_agent_reg r;
    char pool[DB_NAME_LEN];
    int gpus, approved, requested;
    size_t i;

    memset(&other, 0, sizeof(other));
    strcpy(other.name, "other");
    strcpy(other.label_key, "k");
    strcpy(other.label_value, "other");
    assert_int_equal(db_pool_insert(f->tmp.db, &other), DB_OK);
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        reg_of(&f->tok, "node-a", &r);
        snprintf(r.pool, sizeof(r.pool), "%s", steps[i].ask_pool);
        r.n_gpus = steps[i].ask_gpus;
        assert_int_equal(db_agent_register(f->tmp.db, &r), DB_OK);
        figures(f, "node-a", pool, &gpus, &approved, &requested);
        if (strcmp(pool, steps[i].pool) != 0 || gpus != steps[i].gpus ||
            approved != steps[i].approved || r.pending != steps[i].pending ||
            requested != steps[i].ask_gpus || strcmp(r.approved_pool, steps[i].pool) != 0)
            fail_msg("%s: pool %s, %d GPUs of %d approved, pending %d", steps[i].what, pool,
                     gpus, approved, r.pending);
    }
    /* an admin approves what it asked for last, then sets other figures */
    reg_of(&f->tok, "node-a", &r);
    snprintf(r.pool, sizeof(r.pool), "other");
    r.n_gpus = 4;
    assert_int_equal(db_agent_register(f->tmp.db, &r), DB_OK);
    memset(&ap, 0, sizeof(ap));
    ap.node = "node-a";
    ap.take_requested = 1;
    assert_int_equal(db_agent_node_approve(f->tmp.db, &ap), DB_OK);
    figures(f, "node-a", pool, &gpus, &approved, &requested);
    assert_string_equal(pool, "other");
    assert_true(gpus == 4 && approved == 4);
    memset(&ap, 0, sizeof(ap));
    ap.node = "node-a";
    ap.n_gpus = 3;
    assert_int_equal(db_agent_node_approve(f->tmp.db, &ap), DB_OK);
    figures(f, "node-a", pool, &gpus, &approved, &requested);
    assert_string_equal(pool, "other"); /* NULL pool: kept */
    assert_true(gpus == 3 && approved == 3);
    ap.pool = "nowhere";
    assert_int_equal(db_agent_node_approve(f->tmp.db, &ap), DB_ENOTFOUND);
    ap.node = "node-z";
    ap.pool = NULL;
    assert_int_equal(db_agent_node_approve(f->tmp.db, &ap), DB_ENOTFOUND);
    /* figures set on a token win over what its node asks for, from the start */
    memset(&preset, 0, sizeof(preset));
    snprintf(preset.id, sizeof(preset.id), "tok3");
    snprintf(preset.name, sizeof(preset.name), "tok3");
    snprintf(preset.secret_hash, sizeof(preset.secret_hash), "%064d", 0);
    snprintf(preset.pool, sizeof(preset.pool), "other");
    preset.has_gpus = 1;
    preset.n_gpus = 1;
    assert_int_equal(db_agent_token_insert(f->tmp.db, &preset), DB_OK);
    for (i = 0; i < 2; i++) {
        /* node-c asks for 8 GPUs: the token's 1, then an admin's 6 (the
         * token's figures counted once: an admin's later ones stay) */
        int want = i == 0 ? 1 : 6;

        if (i == 1) {
            memset(&ap, 0, sizeof(ap));
            ap.node = "node-c";
            ap.n_gpus = want;
            assert_int_equal(db_agent_node_approve(f->tmp.db, &ap), DB_OK);
        }
        reg_of(&preset, "node-c", &r);
        r.n_gpus = 8;
        assert_int_equal(db_agent_register(f->tmp.db, &r), DB_OK);
        figures(f, "node-c", pool, &gpus, &approved, &requested);
        assert_string_equal(pool, "other");
        assert_true(gpus == want && approved == want && requested == 8 && r.pending);
    }
}

static void test_node_lost(void **state)
{
    struct fixture *f = *state;
    char uids[4][DB_ID_LEN];
    struct db_pod_report p[1];
    struct db_node *nodes = NULL;
    int n = 0, lost = 0;

    placed(f, "w5", 1, f->reg.node_seq, "Initializing");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    p[0] = report(uids[0], DB_POD_RUNNING, 0);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    /* last seen at 3000 ms, lost after 2000 ms (the lease and its margin):
     * not at 4000 nor at 5000 exactly, yes at 6000, but never before the
     * server's own start plus that time */
    assert_int_equal(db_agent_expire(f->tmp.db, 4000, 0, 2000, &lost), DB_OK);
    assert_int_equal(lost, 0);
    assert_int_equal(db_agent_expire(f->tmp.db, 5000, 0, 2000, &lost), DB_OK);
    assert_int_equal(lost, 0);
    assert_int_equal(db_agent_expire(f->tmp.db, 6000, 5000, 2000, &lost), DB_OK);
    assert_int_equal(lost, 0);
    assert_int_equal(db_agent_expire(f->tmp.db, 6000, 0, 4000, &lost), DB_OK);
    assert_int_equal(lost, 0);
    assert_int_equal(db_agent_expire(f->tmp.db, 6000, 0, 2000, &lost), DB_OK);
    assert_int_equal(lost, 1);
    assert_string_equal(phase_of(f, "w5"), "Pending");
    assert_int_equal(db_node_list(f->tmp.db, &nodes, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(nodes[0].ready, 0);
    free(nodes);
    /* it heartbeats again: Ready, and nothing to run */
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, &n), DB_OK);
    assert_int_equal(n, 0);
    assert_int_equal(db_node_list(f->tmp.db, &nodes, &n), DB_OK);
    assert_int_equal(nodes[0].ready, 1);
    free(nodes);
}

/* A cycle that rewrites a workload's pods keeps the uid of a pod whose
 * node and devices did not change, and so does one that only places
 * more of its pods (pods_added_only: no row of the workload is looked up
 * to go); a new binding has a new uid of 32 lowercase hex digits. */
static void test_uid_kept(void **state)
{
    static const struct {
        int placed;        /* pod 1 on the node (else taken off) */
        uint64_t devices;  /* pod 1's devices */
        int added_only;
        int n;             /* the pods the node runs after it */
    } steps[] = {
        {1, 4, 0, 2}, /* pod 1 moves to device 2 */
        {0, 4, 0, 1}, /* pod 1 taken off */
        {1, 8, 1, 2}, /* pod 1 placed again, the cycle only placing more */
    };
    struct fixture *f = *state;
    char before[4][DB_ID_LEN], after[4][DB_ID_LEN];
    struct db_sched_pod pods[2] = {{f->reg.node_seq, 1}, {f->reg.node_seq, 2}};
    struct db_wl_update u;
    struct db_cycle c;
    int n = 0, applied = 0, i;
    int64_t seq = placed(f, "w6", 2, f->reg.node_seq, "Running");

    assert_int_equal(beat(f, &f->tok, NULL, 0, before, &n), DB_OK);
    assert_int_equal(n, 2);
    memset(&u, 0, sizeof(u));
    u.seq = seq;
    u.version = 1;
    u.phase = "Running";
    u.phase_reason = u.phase_message = "";
    u.pods_changed = 1;
    u.pods = pods;
    u.n_pods = 2;
    memset(&c, 0, sizeof(c));
    c.updates = &u;
    c.n_updates = 1;
    for (i = 0; i < (int)(sizeof(steps) / sizeof(steps[0])); i++) {
        pods[1].node_seq = steps[i].placed ? f->reg.node_seq : 0;
        pods[1].devices = steps[i].devices;
        u.pods_added_only = steps[i].added_only;
        assert_int_equal(db_cycle_apply(f->tmp.db, &c, &applied), DB_OK);
        assert_int_equal(applied, 1);
        assert_int_equal(beat(f, &f->tok, NULL, 0, after, &n), DB_OK);
        assert_int_equal(n, steps[i].n);
        assert_string_equal(after[0], before[0]);
        if (n == 2) {
            assert_string_not_equal(after[1], before[1]);
            assert_int_equal(strlen(after[1]), 32);
            assert_int_equal(strspn(after[1], "0123456789abcdef"), 32);
            memcpy(before[1], after[1], DB_ID_LEN);
        }
    }
}

/* The Running workloads' idle figures, for workload seq. */
static struct db_limited limited(struct fixture *f, int64_t seq)
{
    struct db_limited *ls = NULL, out;
    int n = 0, i;

    memset(&out, 0, sizeof(out));
    assert_int_equal(db_agent_limited(f->tmp.db, &ls, &n), DB_OK);
    for (i = 0; i < n; i++)
        if (ls[i].seq == seq)
            out = ls[i];
    free(ls);
    assert_int_equal(out.seq, seq);
    return out;
}

static int events_with(struct fixture *f, int64_t seq, const char *reason, const char *text)
{
    struct db_event *ev = NULL;
    int n = 0, i, hits = 0;

    assert_int_equal(db_event_list(f->tmp.db, seq, 0, 0, 100, &ev, &n), DB_OK);
    for (i = 0; i < n; i++)
        hits += strcmp(ev[i].reason, reason) == 0 && strstr(ev[i].message, text) != NULL;
    free(ev);
    return hits;
}

/* A running pod's GPU figures: stored per device, given or not; a device
 * used without being given is one event, not one per heartbeat; the idle
 * streak starts at the first all-zero report and ends at a busy one; a
 * report without figures clears them; the run's end forgets them. */
static void test_gpu_figures(void **state)
{
    struct fixture *f = *state;
    char uids[4][DB_ID_LEN];
    struct db_pod_gpu busy[] = {{0, 37, 2048, 42}};
    struct db_pod_gpu idle_and_outside[] = {{0, 0, 2048, 42}, {1, 5, 100, 43}};
    struct db_pod_gpu unknown[] = {{0, -1, -1, 42}}; /* e.g. under MIG */
    struct db_pod_gpu_row *rows = NULL;
    struct db_pod_report p[1];
    struct db_limited l;
    int64_t seq;
    int n = 0;

    strcpy(f->proj.scheduling_rules, "{\"trainingJobMaxIdleDurationSeconds\":1}");
    seq = placed(f, "w7", 1, f->reg.node_seq, "Initializing");
    assert_int_equal(beat(f, &f->tok, NULL, 0, uids, &n), DB_OK);
    p[0] = report(uids[0], DB_POD_RUNNING, 0);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_string_equal(phase_of(f, "w7"), "Running");
    l = limited(f, seq);
    assert_int_equal(l.n_devices, 0); /* no figures yet */
    assert_int_equal(l.n_unmeasured, 1);

    p[0].has_gpus = 1;
    p[0].gpus = busy;
    p[0].n_gpus = 1;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_int_equal(db_pod_gpu_list(f->tmp.db, seq, &rows, &n), DB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].gpu, 0);
    assert_int_equal(rows[0].given, 1);
    assert_int_equal(rows[0].utilization, 37);
    assert_int_equal(rows[0].mem_mib, 2048);
    assert_string_equal(rows[0].node_name, "node-a");
    assert_string_equal(rows[0].workload_name, "w7");
    free(rows);
    l = limited(f, seq);
    assert_int_equal(l.n_devices, 1);
    assert_int_equal(l.n_idle, 0);
    assert_int_equal(l.n_unmeasured, 0);
    assert_int_equal(l.idle_since, 0);

    /* idle on its device, busy on device 1 it was not given */
    p[0].gpus = idle_and_outside;
    p[0].n_gpus = 2;
    beat_now = 4000;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    beat_now = 5000;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_int_equal(events_with(f, seq, "GpuOutsideAllocation",
                                 "pod 0 of w7 uses GPU 1 on node-a (process 43, 100 MiB), which"
                                 " it was not given: its devices are 0"), 1);
    assert_int_equal(db_pod_gpu_list(f->tmp.db, seq, &rows, &n), DB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows[1].gpu, 1);
    assert_int_equal(rows[1].given, 0);
    free(rows);
    l = limited(f, seq);
    assert_int_equal(l.n_devices, 1); /* the devices it was given */
    assert_int_equal(l.n_idle, 1);
    assert_int_equal(l.idle_since, 4000);

    /* busy again: the streak ends; unknown utilisation is not idle */
    p[0].gpus = busy;
    p[0].n_gpus = 1;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_int_equal(limited(f, seq).idle_since, 0);
    p[0].gpus = unknown;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    l = limited(f, seq);
    assert_int_equal(l.n_devices, 1);
    assert_int_equal(l.n_idle, 0);
    assert_int_equal(l.idle_since, 0);
    /* no figures: none kept, unmeasured */
    p[0].gpus = busy;
    p[0].has_gpus = 0;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_int_equal(db_pod_gpu_list(f->tmp.db, seq, &rows, &n), DB_OK);
    assert_int_equal(n, 0);
    free(rows);
    assert_int_equal(limited(f, seq).n_unmeasured, 1);

    /* the run ends: its figures go with it */
    p[0].has_gpus = 1;
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_int_equal(db_pod_gpu_list(f->tmp.db, 0, &rows, &n), DB_OK);
    assert_int_equal(n, 1);
    free(rows);
    p[0] = report(uids[0], DB_POD_EXITED, 0);
    assert_int_equal(beat(f, &f->tok, p, 1, NULL, NULL), DB_OK);
    assert_int_equal(db_pod_gpu_list(f->tmp.db, 0, &rows, &n), DB_OK);
    assert_int_equal(n, 0);
    free(rows);
    beat_now = 3000;
}

static void test_sha256(void **state)
{
    char out[65];

    (void)state;
    api_sha256_hex("", 0, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    api_sha256_hex("abc", 3, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    api_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, out);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* Rendezvous blocks, asked for in order by live workloads a-e, in the
 * range each ask names: first fit, kept while the workload lives whatever
 * range a later ask names, and never outside the range asked in. */
static void test_rendezvous(void **state)
{
    static const struct {
        const char *name;
        int n_ports, first, last;
        int rc, port;
    } asks[] = {
        {"a", 3, 30000, 30004, DB_OK, 30000},
        {"b", 2, 30000, 30004, DB_OK, 30003},
        {"c", 1, 30000, 30004, DB_ELIMIT, 0},     /* the range is full */
        {"a", 3, 20000, 20009, DB_OK, 30000},     /* a keeps its block */
        {"c", 1, 20000, 20009, DB_OK, 20000},     /* the blocks above are passed over */
        {"d", 2, 30002, 30010, DB_OK, 30005},     /* a's block reaches into the range */
        {"e", 2, 30000, 30006, DB_ELIMIT, 0},     /* 30007 is past the range */
        {"e", 2, 30000, 30008, DB_OK, 30007},
    };
    struct fixture *f = *state;
    const char *names = "abcde";
    int64_t seq[5];
    size_t i;

    for (i = 0; i < 5; i++) {
        char name[2] = {names[i], 0};
        seq[i] = placed(f, name, 1, f->reg.node_seq, "Running");
    }
    for (i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
        int port = -1;
        int64_t w = seq[strchr(names, asks[i].name[0]) - names];
        assert_int_equal(db_rendezvous_ports(f->tmp.db, w, asks[i].n_ports, asks[i].first,
                                             asks[i].last, &port), asks[i].rc);
        assert_int_equal(port, asks[i].port);
    }
}

/* Each test on a fresh fixture: setup before, teardown after. */
#define AGENT_TEST(t) cmocka_unit_test_setup_teardown(t, setup, tmpdb_teardown)

RUN_TESTS(
    AGENT_TEST(test_registration),
    AGENT_TEST(test_running_then_completed),
    AGENT_TEST(test_failed_and_lost),
    AGENT_TEST(test_other_node_ignored),
    AGENT_TEST(test_node_lost),
    AGENT_TEST(test_approval),
    AGENT_TEST(test_uid_kept),
    AGENT_TEST(test_gpu_figures),
    AGENT_TEST(test_rendezvous),
    cmocka_unit_test(test_sha256)
)
