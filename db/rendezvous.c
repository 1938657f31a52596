/*
 * rendezvous.c: the ports a distributed workload's pods meet on. Each
 * distributed workload that has pods bound gets a block of node ports,
 * one per pod: the first is the master's (MASTER_PORT, a TF chief's or
 * JAX coordinator's port), pod i listens on port + i where a framework
 * gives every pod its own (TF_CONFIG). Blocks are taken first fit from
 * [DB_RENDEZVOUS_FIRST, DB_RENDEZVOUS_LAST]; a workload keeps its block
 * while it lives, so every pod of a gang (and a pod restarted later) is
 * told the same ports.
 *
 * Invariants:
 *   1. Two live workloads never hold overlapping blocks, whatever nodes
 *      their pods are on: a block is taken in one write, after the blocks
 *      of workloads that are deleted, purged or ended were given back.
 *   2. A workload's block does not change while it lives (the row is
 *      read first; only a workload without one takes one).
 */
#include "db_int.h"
#include "db_agent.h"

#include <string.h>

struct block_arg {
    int64_t workload_seq;
    int n;
    int port;                    /* out */
};

/* The first port of a free run of a->n ports, or 0 if none. */
static int first_fit(struct db__conn *c, int n, int *rc)
{
    static const char sql[] = "SELECT port, n_ports FROM rendezvous ORDER BY port";
    struct db__stmt *st = db__prep(c, sql, rc);
    int next = DB_RENDEZVOUS_FIRST, found = 0, src;

    if (!st)
        return 0;
    while ((src = db__step(st)) == DB__ROW) {
        int port = db__col_int(st, 0), width = db__col_int(st, 1);
        if (port - next >= n) {
            found = next;
            break;
        }
        if (port + width > next)
            next = port + width;
    }
    *rc = db__done(st, src == DB__ROW || src == DB__DONE ? DB_OK : src);
    if (*rc == DB_OK && !found && next + n - 1 <= DB_RENDEZVOUS_LAST)
        found = next;
    return found;
}

static int block_fn(struct db__conn *c, void *arg)
{
    static const char get[] = "SELECT port FROM rendezvous WHERE workload_seq = ?";
    static const char gone[] =
        "DELETE FROM rendezvous WHERE workload_seq NOT IN (SELECT seq FROM workloads"
        " WHERE deleted_at = 0 AND phase NOT IN ('Completed', 'Failed'))";
    static const char put[] =
        "INSERT INTO rendezvous (workload_seq, port, n_ports) VALUES (?, ?, ?)";
    struct block_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, get, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->workload_seq);
    src = db__step(st);
    if (src == DB__ROW)
        a->port = db__col_int(st, 0);
    rc = db__done(st, src == DB__ROW || src == DB__DONE ? DB_OK : src);
    if (rc != DB_OK || a->port > 0)
        return rc;
    rc = db__exec(c, gone);
    if (rc == DB_OK)
        a->port = first_fit(c, a->n, &rc);
    if (rc == DB_OK && a->port == 0)
        rc = DB_ELIMIT;
    if (rc != DB_OK)
        return rc;
    st = db__prep(c, put, &rc);
    if (!st)
        return rc;
    db__bind_int64(st, 1, a->workload_seq);
    db__bind_int(st, 2, a->port);
    db__bind_int(st, 3, a->n);
    return db__done(st, db__step_done(st));
}

int db_rendezvous_ports(struct db *db, int64_t workload_seq, int n_pods, int *port)
{
    struct block_arg a = {workload_seq, n_pods > 0 ? n_pods : 1, 0};
    int rc = db__write(db, block_fn, &a);

    *port = rc == DB_OK ? a.port : 0;
    return rc;
}
