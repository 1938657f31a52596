/*
 * changefeed.c: a replica's reader of the change log (db_ha.h): what
 * other replicas changed, handed to the scheduler thread as the touches
 * and organization changes its own handlers would have made in-process.
 *
 * A poll (ctl_feed_poll):
 *   Step 1: read the rows above the highest seq read so far, in seq
 *           order; every seq skipped between two rows is a gap: a
 *           change still being committed by another replica (seqs are
 *           given before commit, so they commit out of order), or one
 *           rolled back, which never comes;
 *   Step 2: look each gap up again; a gap found is a change like any
 *           other, one older than GAP_MS (or past MAX_GAPS) is given up;
 *   Step 3: hand every row written by another process to the callback
 *           (this process's own were told in-process already), after
 *           moving the database's data generation (db_data_changed), so
 *           that the API's read cache drops what it read before.
 *
 * Invariants:
 *   1. Each row is handed over at most once.
 *   2. A change committed within GAP_MS of its seq being given is handed
 *      over, whatever the order of commits.
 */
#include "control.h"
#include "db_ha.h"

#include <stdlib.h>
#include <string.h>

#define GAP_MS 30000
#define MAX_GAPS 256
#define PAGE 4096

struct gap {
    int64_t seq, since_ms;
};

struct ctl_feed {
    int64_t high;             /* the highest seq read */
    struct gap gaps[MAX_GAPS];
    int n_gaps;
    int started;
};

struct ctl_feed *ctl_feed_new(void)
{
    return calloc(1, sizeof(struct ctl_feed));
}

void ctl_feed_free(struct ctl_feed *f)
{
    free(f);
}

static void add_gap(struct ctl_feed *f, int64_t seq, int64_t now_ms)
{
    if (f->n_gaps == MAX_GAPS) { /* give the oldest up */
        memmove(f->gaps, f->gaps + 1, sizeof(f->gaps[0]) * (MAX_GAPS - 1));
        f->n_gaps--;
    }
    f->gaps[f->n_gaps].seq = seq;
    f->gaps[f->n_gaps++].since_ms = now_ms;
}

/* A row of another process: what this one keeps of the database is
 * older than it (db_data_changed), and the callback hears of it. */
static void hand(struct db *db, const struct db_change *ch, ctl_feed_fn fn, void *arg)
{
    if (ch->own)
        return;
    db_data_changed(db);
    fn(arg, ch);
}

/* Step 1: one page above high; whether a full page came (read again). */
static int read_new(struct ctl_feed *f, struct db *db, int64_t now_ms, ctl_feed_fn fn, void *arg,
                    int *more)
{
    struct db_change *rows = NULL;
    int n = 0, i, rc = db_changes_since(db, f->high, PAGE, &rows, &n);
    int64_t s;

    *more = 0;
    if (rc != DB_OK)
        return -1;
    for (i = 0; i < n; i++) {
        for (s = f->high + 1; s < rows[i].seq && s - f->high <= MAX_GAPS; s++)
            add_gap(f, s, now_ms);
        f->high = rows[i].seq;
        hand(db, &rows[i], fn, arg);
    }
    *more = n == PAGE;
    free(rows);
    return 0;
}

/* Step 2 */
static int read_gaps(struct ctl_feed *f, struct db *db, int64_t now_ms, ctl_feed_fn fn, void *arg)
{
    int i, k = 0, n, rc = 0;

    for (i = 0; i < f->n_gaps; i++) {
        struct db_change *row = NULL;
        int found = 0;
        if (rc == 0 && db_changes_since(db, f->gaps[i].seq - 1, 1, &row, &n) == DB_OK) {
            found = n == 1 && row[0].seq == f->gaps[i].seq;
            if (found)
                hand(db, &row[0], fn, arg);
        } else {
            rc = -1; /* keep the rest for the next poll */
        }
        free(row);
        if (!found && now_ms - f->gaps[i].since_ms < GAP_MS)
            f->gaps[k++] = f->gaps[i];
    }
    f->n_gaps = k;
    return rc;
}

int ctl_feed_poll(struct ctl_feed *f, struct db *db, int64_t now_ms, ctl_feed_fn fn, void *arg)
{
    int more = 1, pages = 0;

    if (!f->started) { /* what came before is in the state loaded whole */
        if (db_changes_last(db, &f->high) != DB_OK)
            return -1;
        f->started = 1;
        return 0;
    }
    while (more && pages++ < 16)
        if (read_new(f, db, now_ms, fn, arg, &more) != 0)
            return -1;
    return f->n_gaps > 0 ? read_gaps(f, db, now_ms, fn, arg) : 0;
}
