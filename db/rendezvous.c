/*
 * rendezvous.c: the ports a distributed workload's pods meet on. Each
 * distributed workload that has pods bound gets a block of node ports,
 * one per pod: the first is the master's (MASTER_PORT, a TF chief's or
 * JAX coordinator's port), pod i listens on port + i where a framework
 * gives every pod its own (TF_CONFIG). Blocks are taken first fit from
 * the range allotd is given (--rendezvous-ports, by default
 * [DB_RENDEZVOUS_FIRST, DB_RENDEZVOUS_LAST]); a workload keeps its block
 * while it lives, so every pod of a gang (and a pod restarted later) is
 * told the same ports.
 *
 * Invariants:
 *   1. Two live workloads never hold overlapping blocks, whatever nodes
 *      their pods are on: a block is taken in one write, after the blocks
 *      of workloads that are deleted, purged or ended were given back.
 *   2. A workload's block does not change while it lives (the row is
 *      read first; only a workload without one takes one), even when
 *      allotd restarts with another range.
 */
#include "db_int.h"
#include "db_agent.h"

#include <string.h>

struct block_arg {
    int64_t workload_seq;
    int n;
    int first, last;             /* the range blocks are taken from */
    int port;                    /* out */
};

/* The blocks in port order, walked for the first free run of n ports. */
struct fit {
    int n, next, found;
};

static int read_block(struct db__stmt *st, void *arg)
{
    struct fit *f = arg;
    int port = db__col_int(st, 0), width = db__col_int(st, 1);

    if (f->found)
        return DB_OK;
    if (port - f->next >= f->n)
        f->found = f->next;
    else if (port + width > f->next)
        f->next = port + width;
    return DB_OK;
}

/* The first port of a free run of a->n ports in the range, or 0 if none
 * (blocks below the range, taken under another, are passed over). */
static int first_fit(struct db__conn *c, const struct block_arg *a, int *port)
{
    static const char sql[] = "SELECT port, n_ports FROM rendezvous ORDER BY port";
    struct fit f = {a->n, a->first, 0};
    int rc = db__query_each(c, sql, NULL, 0, read_block, &f);

    if (rc == DB_OK && f.found && f.found + a->n - 1 > a->last)
        f.found = 0;
    if (rc == DB_OK && !f.found && f.next + a->n - 1 <= a->last)
        f.found = f.next;
    *port = f.found;
    return rc;
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
    const struct db__arg key[] = {DB__I(a->workload_seq)};
    int64_t kept = 0;
    int rc = db__query_one(c, get, key, DB__NARGS(key), db__read_int64, &kept);

    if (rc == DB_OK) /* invariant 2: the block it holds */
        a->port = (int)kept;
    if (rc != DB_ENOTFOUND)
        return rc;
    rc = db__exec(c, gone);
    if (rc == DB_OK)
        rc = first_fit(c, a, &a->port);
    if (rc == DB_OK && a->port == 0)
        rc = DB_ELIMIT;
    if (rc == DB_OK) {
        const struct db__arg row[] = {DB__I(a->workload_seq), DB__I(a->port), DB__I(a->n)};
        rc = db__exec_args(c, put, row, DB__NARGS(row));
    }
    return rc;
}

int db_rendezvous_ports(struct db *db, int64_t workload_seq, int n_pods, int first, int last,
                        int *port)
{
    struct block_arg a = {workload_seq, n_pods > 0 ? n_pods : 1, first, last, 0};
    int rc = db__write(db, block_fn, &a);

    *port = rc == DB_OK ? a.port : 0;
    return rc;
}
