/*
 * main.c: allotd: options, bootstrap, start, and the graceful stop.
 *
 * Start:
 *   Step 1: block SIGINT/SIGTERM in every thread (they are taken with
 *           sigwait by the main thread only); room for a malloc arena per
 *           thread (arenas());
 *   Step 2: the database is taken for this process (a second allotd on it
 *           stops here), and opened: an existing one normally; a new one
 *           with --init; with --demo a fresh one replacing the demo's;
 *   Step 3: load or create the key; load the secrets key (secrets.h:
 *           --init makes it; a database holding secrets without it is
 *           refused);
 *   Step 4: bootstrap: the default node pool and department; on an empty
 *           database the admin user (password from ALLOT_ADMIN_PASSWORD
 *           or random, printed once) with a System administrator rule;
 *           the simulated nodes; with --demo the default department
 *           deserves the simulated GPUs of each pool. --init stops here;
 *   Step 5: the dashboard's files, the scheduler thread, then the HTTP
 *           server.
 * Stop (SIGINT/SIGTERM): answer the heartbeats that wait (ctl_watch_close),
 * stop accepting and finish in-flight requests (mg_stop), let the
 * scheduler finish its cycle, close the database.
 */
#include "api.h"
#include "secrets.h"
#include "sched.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ensure_pool(struct db *db, const char *name, struct db_pool *out)
{
    int rc = db_pool_by_name(db, name, out);

    if (rc != DB_ENOTFOUND)
        return rc;
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->label_key, sizeof(out->label_key), "run.ai/node-pool");
    snprintf(out->label_value, sizeof(out->label_value), "%s", name);
    out->gpu_placement = api_pool_default_gpu_placement();
    out->cpu_placement = 1;
    snprintf(out->created_by, sizeof(out->created_by), "system");
    rc = db_pool_insert(db, out);
    return rc == DB_ECONFLICT ? db_pool_by_name(db, name, out) : rc;
}

static int ensure_department(struct db *db)
{
    struct db_queue *q = calloc(1, sizeof(*q));
    int rc;

    if (!q)
        return DB_ENOMEM;
    rc = db_queue_by_name(db, DB_DEPARTMENT, "default", q);
    if (rc == DB_ENOTFOUND) {
        memset(q, 0, sizeof(*q));
        q->kind = DB_DEPARTMENT;
        snprintf(q->name, sizeof(q->name), "default");
        snprintf(q->description, sizeof(q->description), "projects created without a parent");
        snprintf(q->created_by, sizeof(q->created_by), "system");
        rc = db_queue_insert(db, q);
    }
    free(q);
    return rc;
}

static int bootstrap_admin(struct db *db, int hash_cost)
{
    struct db_user u;
    struct db_rule r;
    const char *env = getenv("ALLOT_ADMIN_PASSWORD");
    char pw[64];
    int64_t n = 0;
    int rc;

    rc = db_user_count(db, &n);
    if (rc != DB_OK || n > 0)
        return rc;
    if (env && *env)
        snprintf(pw, sizeof(pw), "%s", env);
    else if (api_random_text(pw, sizeof(pw), 20) != 0)
        return DB_EIO;
    memset(&u, 0, sizeof(u));
    u.kind = DB_USER;
    snprintf(u.login, sizeof(u.login), "admin");
    snprintf(u.name, sizeof(u.name), "admin");
    snprintf(u.created_by, sizeof(u.created_by), "system");
    if (api_secret_hash(pw, hash_cost, u.secret_hash, sizeof(u.secret_hash)) != 0)
        return DB_EIO;
    rc = db_user_insert(db, &u);
    if (rc != DB_OK)
        return rc;
    memset(&r, 0, sizeof(r));
    snprintf(r.subject_type, sizeof(r.subject_type), "user");
    snprintf(r.subject_id, sizeof(r.subject_id), "admin");
    r.role_id = 1;
    snprintf(r.scope_type, sizeof(r.scope_type), "system");
    snprintf(r.created_by, sizeof(r.created_by), "system");
    rc = db_rule_insert(db, &r);
    if (rc == DB_OK) {
        if (env && *env)
            printf("allotd: created user 'admin' with the password from ALLOT_ADMIN_PASSWORD\n");
        else
            printf("allotd: created user 'admin' with password: %s\n"
                   "allotd: (shown once; change it with POST /api/v1/me/password)\n", pw);
        fflush(stdout);
    }
    memset(pw, 0, sizeof(pw));
    return rc;
}

/* A simulated node's labels: its node type and its pool's label. */
static int sim_labels(const struct db_pool *pool, const struct api_sim_spec *sp, char *out,
                      size_t len)
{
    json_t *o = json_object();
    char *text;
    int rc = -1;

    if (o && sp->node_type[0])
        json_object_set_new(o, "node-type", json_string(sp->node_type));
    if (o && pool->label_key[0])
        json_object_set_new(o, pool->label_key, json_string(pool->label_value));
    text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text && strlen(text) < len) {
        memcpy(out, text, strlen(text) + 1);
        rc = 0;
    }
    free(text);
    json_decref(o);
    return rc;
}

/* The simulated machines of one --simulate-nodes spec, in one transaction. */
static int simulate_spec(struct db *db, const struct api_sim_spec *sp, int *counter)
{
    struct db_pool pool;
    struct db_node *nodes;
    int i, rc = ensure_pool(db, sp->pool, &pool);

    if (rc != DB_OK)
        return rc;
    nodes = calloc((size_t)sp->machines + 1, sizeof(*nodes));
    if (!nodes)
        return DB_ENOMEM;
    for (i = 0; i < sp->machines; i++) {
        struct db_node *n = &nodes[i];
        (*counter)++;
        if (strcmp(sp->pool, "default") == 0)
            snprintf(n->name, sizeof(n->name), "node-%d", *counter);
        else
            snprintf(n->name, sizeof(n->name), "%.60s-node-%d", sp->pool, i + 1);
        n->pool_seq = pool.seq;
        n->n_gpus = sp->gpus;
        snprintf(n->gpu_type, sizeof(n->gpu_type), "simulated");
        snprintf(n->node_type, sizeof(n->node_type), "%s", sp->node_type);
        n->cpu_milli = -1;
        n->mem_mib = -1;
        n->ready = 1;
        n->simulated = 1;
        n->gpu_memory_mib = sp->gpu_memory_mib;
        n->pool_pinned = strcmp(sp->pool, "default") != 0;
        if (sim_labels(&pool, sp, n->labels, sizeof(n->labels)) != 0) {
            rc = DB_ENOMEM;
            goto out;
        }
    }
    rc = db_node_upsert_many(db, nodes, sp->machines);
out:
    free(nodes);
    return rc;
}

static int simulate_nodes(struct db *db, const struct api_config *cfg)
{
    int s, rc = DB_OK, counter = 0;

    for (s = 0; rc == DB_OK && s < cfg->n_sims; s++)
        rc = simulate_spec(db, &cfg->sims[s], &counter);
    return rc;
}

/* --demo: the default department is given the simulated GPUs of each pool
 * as its deserved quota, so that the demo's projects can run
 * non-preemptible work (workspaces, inference) within their own quotas at
 * once. A department without a quota entry deserves 0 GPUs in a pool
 * (docs/scheduler.md), the default department included. */
static int demo_department_quota(struct db *db, const struct api_config *cfg)
{
    struct db_queue *q = calloc(1, sizeof(*q));
    struct db_pool pool;
    int s, i, rc;

    if (!q)
        return DB_ENOMEM;
    rc = db_queue_by_name(db, DB_DEPARTMENT, "default", q);
    for (s = 0; rc == DB_OK && s < cfg->n_sims; s++) {
        rc = db_pool_by_name(db, cfg->sims[s].pool, &pool);
        for (i = 0; rc == DB_OK && i < q->n_quotas && q->quotas[i].pool_seq != pool.seq; i++)
            ;
        if (rc != DB_OK)
            break;
        if (i == q->n_quotas) {
            if (i == DB_MAX_POOLS) {
                rc = DB_EINVAL;
                break;
            }
            memset(&q->quotas[i], 0, sizeof(q->quotas[i]));
            q->quotas[i].pool_seq = pool.seq;
            snprintf(q->quotas[i].pool_name, sizeof(q->quotas[i].pool_name), "%s", pool.name);
            q->quotas[i].limit[SCHED_GPU] = -1;
            q->quotas[i].weight[SCHED_GPU] = 1000;
            q->quotas[i].has[SCHED_GPU] = 1;
            q->quotas[i].priority = SCHED_OQ_NORMAL;
            q->n_quotas++;
        }
        q->quotas[i].deserved[SCHED_GPU] +=
            (int64_t)cfg->sims[s].machines * cfg->sims[s].gpus * SCHED_MILLI;
    }
    if (rc == DB_OK)
        rc = db_queue_update(db, q);
    free(q);
    return rc;
}

static int bootstrap(struct api_app *app)
{
    struct db_pool pool;
    int rc = ensure_pool(app->db, "default", &pool);

    if (rc == DB_OK)
        rc = ensure_department(app->db);
    if (rc == DB_OK)
        rc = bootstrap_admin(app->db, app->cfg.secret_hash_cost);
    if (rc == DB_OK)
        rc = simulate_nodes(app->db, &app->cfg);
    if (rc == DB_OK && app->cfg.demo)
        rc = demo_department_quota(app->db, &app->cfg);
    if (rc != DB_OK)
        fprintf(stderr, "allotd: bootstrap failed: %s\n", db_strerror(rc));
    return rc;
}

static void write_port_file(const struct api_app *app)
{
    char tmp[600];
    FILE *f;

    if (!app->cfg.port_file[0])
        return;
    snprintf(tmp, sizeof(tmp), "%s.new", app->cfg.port_file);
    f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%d\n", app->port);
    if (fclose(f) == 0)
        rename(tmp, app->cfg.port_file);
}

static int wait_for_signal(const sigset_t *set)
{
    int sig = 0;

    while (sigwait(set, &sig) != 0)
        ;
    return sig;
}

/* glibc gives threads at most 8 malloc arenas per core and shares them
 * beyond that, so on a small machine the writer and the scheduler thread
 * share an arena with HTTP workers; a worker preempted while it holds the
 * arena's lock stalls the writer's turn, which the submissions queued
 * behind it wait for (bench/NOTES.md, "Where the writer's holds went").
 * Room for one arena per thread: the HTTP workers, and the server's own
 * threads (writer, checkpointer, scheduler, recorder, leader, ...). */
static void arenas(int http_threads)
{
    mallopt(M_ARENA_MAX, http_threads + 32);
}

/* The control loop purged deleted workloads: their logs go too. */
static void drop_purged_logs(void *arg, const int64_t *seqs, int n)
{
    const struct api_app *app = arg;

    api_logs_drop(app->cfg.files_stem, seqs, n);
}

/* Another replica changed the tenant's settings: this one applies them
 * (a failed read keeps what it had; the next change reads them again). */
static void settings_changed(void *arg)
{
    struct api_app *app = arg;

    if (api_tenant_settings_load(app) != DB_OK)
        fprintf(stderr, "allotd: cannot read the tenant settings another replica changed\n");
}

/* Another replica changed users, tokens or access rules. */
static void principals_changed(void *arg)
{
    const struct api_app *app = arg;

    api_pcache_invalidate(app->pc);
}

int main(int argc, char **argv)
{
    struct api_app *app = calloc(1, sizeof(*app));
    struct ctl_sched_opts opts = {0};
    struct ctl_leader_opts lopts = {0, 0, 0, NULL};
    sigset_t set;
    int rc, status = 1;

    if (!app)
        return 1;
    rc = api_config_parse(&app->cfg, argc, argv);
    if (rc != 0) {
        free(app);
        return rc > 0 ? 0 : 2;
    }
    /* Step 1 */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    arenas(app->cfg.threads);
    /* Step 2 (db_open says why it fails); no database, or one where --init
     * wants to make one, is an error of the command line: status 2 */
    if (app->cfg.db_statement_ms >= 0)
        db_set_statement_timeout(app->cfg.db_statement_ms);
    rc = db_open(app->cfg.db_path, app->cfg.demo ? DB_OPEN_FRESH
                                   : app->cfg.init ? DB_OPEN_CREATE : DB_OPEN_EXISTING,
                 &app->db);
    if (rc == DB_ENOTFOUND || rc == DB_ECONFLICT)
        status = 2;
    if (rc != DB_OK)
        goto out;
    /* Step 3 */
    if (api_key_load(app->cfg.key_file, &app->key) != 0 ||
        api_secrets_start(app->db, app->cfg.secrets_key_file, app->cfg.init || app->cfg.demo))
        goto out;
    app->key.leeway_s = app->cfg.token_leeway_s;
    /* Step 4 */
    if (bootstrap(app) != DB_OK)
        goto out;
    if (app->cfg.init) {
        printf("allotd: created the database %s (%s); start allotd without --init to serve"
               " it\n", db_name(app->db), db_describe(app->db));
        status = 0;
        goto out;
    }
    /* Step 5 */
    if (api_static_init(&app->cfg, app->web_root, sizeof(app->web_root)) != 0)
        goto out;
    app->rl = api_ratelimit_new(app->cfg.rate_limit);
    app->url = api_ratelimit_new(app->cfg.user_rate_limit);
    app->lg = api_loginguard_new(app->cfg.secret_checks);
    app->pc = api_pcache_new();
    app->projc = api_projcache_new();
    app->polc = api_polcache_new();
    app->vc = api_viewcache_new();
    app->rcache = api_readcache_new(app->db, app->cfg.read_max_age_ms);
    /* half the HTTP workers at most wait in heartbeats (h_agent.c) */
    app->watch = ctl_watch_new(app->cfg.threads / 2);
    opts.watch = app->watch;
    opts.period_ms = app->cfg.schedule_period_ms;
    opts.sample_period_ms = app->cfg.sample_period_ms;
    opts.agent_lost_after_ms = (int64_t)app->cfg.agent_lease_ms + app->cfg.agent_margin_ms;
    opts.retention_ms = (int64_t)app->cfg.retention_days * 86400000LL;
    opts.purged = drop_purged_logs;
    opts.principals_changed = principals_changed;
    opts.settings_changed = settings_changed;
    opts.hook_arg = app;
    lopts.ttl_ms = app->cfg.leader_lease_ms;
    lopts.renew_ms = app->cfg.leader_renew_ms;
    lopts.ask_ms = app->cfg.leader_ask_ms;
    if (!app->rl || !app->url || !app->lg || ctl_leader_start(app->db, &lopts, &app->leader) != 0)
        goto out;
    opts.leader = app->leader;
    if (ctl_sched_start(app->db, &opts, &app->sched) != 0)
        goto out;
    app->audit = api_audit_start(app->db, app->cfg.audit_retention_days);
    if (!app->audit || api_tenant_settings_load(app) != DB_OK || api_http_start(app) != 0)
        goto out;
    printf("allotd: listening on http://%s (port %d), database %s (%s)\n", app->cfg.listen,
           app->port, db_name(app->db), db_describe(app->db));
    fflush(stdout);
    write_port_file(app);
    rc = wait_for_signal(&set);
    printf("allotd: signal %d: stopping\n", rc);
    fflush(stdout);
    status = 0;
out:
    ctl_watch_close(app->watch); /* no worker waits in a heartbeat past here */
    api_http_stop(app);
    api_audit_stop(app->audit); /* after the workers: every note is queued */
    ctl_sched_stop(app->sched);
    ctl_watch_free(app->watch);
    ctl_leader_stop(app->leader);
    db_close(app->db);
    api_ratelimit_free(app->rl);
    api_ratelimit_free(app->url);
    api_loginguard_free(app->lg);
    api_pcache_free(app->pc);
    api_projcache_free(app->projc);
    api_polcache_free(app->polc);
    api_viewcache_free(app->vc);
    api_readcache_free(app->rcache);
    memset(&app->key, 0, sizeof(app->key));
    free(app);
    return status;
}
