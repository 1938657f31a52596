/*
 * lease.c: the lease allotd grants this node, kept in a file that the
 * agent writes and every pod's supervisor reads.
 *
 * allotd answers each register and heartbeat with leaseMs and lostAfterMs
 * (the lease plus a margin). The agent counts the lease from the moment it
 * SENT the request that got the answer; the server counts lostAfterMs from
 * the moment it RECEIVED its last request from the node, which is later.
 * So, whatever the network does:
 *   until   = sent + leaseMs           the pods get SIGTERM (fenced)
 *   kill_by = until + margin / 2       what is left of them gets SIGKILL
 *   the server requeues no sooner than received + lostAfterMs
 *                                      >= until + margin  >  kill_by
 * and a pod of a node allotd calls lost is gone before it runs elsewhere.
 *
 * WORK_DIR/agent.lease holds "until kill_by" in milliseconds of
 * CLOCK_BOOTTIME (one clock for every process of the machine, which never
 * jumps), written through a rename, so a reader sees one whole line.
 *
 * Invariants:
 *   1. The lease only moves forward: a late answer never shortens it.
 *   2. A missing or unreadable file is a lease that has ended.
 */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t lease_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int lease_read(const char *path, struct lease *out)
{
    char *text = file_read(path, 128);
    long long until, kill_by;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (text && sscanf(text, "%lld %lld", &until, &kill_by) == 2 && until > 0 &&
        kill_by >= until) {
        out->until = until;
        out->kill_by = kill_by;
        rc = 0;
    }
    free(text);
    return rc;
}

int lease_extend(const char *path, struct lease *l, int64_t sent_ms, int64_t lease_ms,
                 int64_t margin_ms)
{
    char line[64];
    int n;

    if (sent_ms + lease_ms <= l->until)
        return 0; /* invariant 1 */
    l->until = sent_ms + lease_ms;
    l->kill_by = l->until + margin_ms / 2;
    n = snprintf(line, sizeof(line), "%lld %lld\n", (long long)l->until,
                 (long long)l->kill_by);
    return file_write_atomic(path, line, (size_t)n);
}

int lease_ended(const struct lease *l, int64_t now_ms)
{
    return l->until <= 0 || now_ms >= l->until;
}
