/*
 * connflood.c: hostile HTTP clients against allotd, and a well-behaved
 * one beside them that measures whether the server still answers.
 *
 *   connflood PORT MODE CONNECTIONS SECONDS [PROBE_DEADLINE_MS]
 *
 * The attack comes from 127.0.0.2 and the probe from 127.0.0.1, so that
 * the per-address rate limit, which would rightly refuse a probe from the
 * attacker's own address, does not decide the outcome.
 *
 * MODE is what the attacking connections do; each one that the server
 * closes is opened again at once, so the attack never lets up:
 *   silent     connect and send nothing;
 *   slowloris  send a request head one byte every 500 ms, never ending it;
 *   keepalive  send one complete GET /healthz, read the answer, then sit
 *              idle on the kept-alive connection;
 *   slowbody   send a POST head announcing 1,000 bytes of body, then one
 *              byte every 500 ms.
 *
 * Meanwhile a probe sends GET /healthz on a fresh connection, one after
 * the other, each given PROBE_DEADLINE_MS (default 10,000) to be answered
 * 200. At the end
 * one line of key=value pairs reports the probes (probes, failed,
 * slowest_ms) and the attack (opened, closed: by the server, and
 * longest_unanswered_ms: the longest a connection stayed open with no
 * byte of answer before the server closed it). Exit status 0 when every
 * probe was answered, 1 otherwise, 2 on a usage or setup error.
 *
 * One thread, non-blocking sockets, poll(); no timing is asserted here
 * beyond the probe's deadline, which is far above what a server that
 * keeps answering needs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t probe_deadline_ms = 10000;
#define TRICKLE_MS 500
#define MAX_CONNS 4000

enum mode { SILENT, SLOWLORIS, KEEPALIVE, SLOWBODY };

struct conn {
    int fd;
    int64_t opened_ms, next_send_ms;
    size_t sent;          /* bytes of the script sent */
    int answered;         /* a byte of answer arrived */
};

struct stats {
    long opened, closed_by_server, connect_failed;
    int64_t longest_open_ms;
    long probes, probes_failed;
    int64_t probe_max_ms;
};

static const char trickle_head[] =
    "GET /healthz HTTP/1.1\r\nHost: allot\r\nUser-Agent: connflood\r\nX-Pad: "
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char keepalive_req[] = "GET /healthz HTTP/1.1\r\nHost: allot\r\n\r\n";
static const char slowbody_head[] =
    "POST /api/v1/token HTTP/1.1\r\nHost: allot\r\nContent-Type: application/json\r\n"
    "Content-Length: 1000\r\n\r\n";

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A non-blocking connection to 127.0.0.1:port from 127.0.0.<from>. */
static int open_conn(int port, int from)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;

    if (fd < 0)
        return -1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK - 1 + (uint32_t)from);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static void conn_start(struct conn *c, int port, struct stats *st)
{
    memset(c, 0, sizeof(*c));
    c->fd = open_conn(port, 2);
    c->opened_ms = c->next_send_ms = now_ms();
    if (c->fd < 0)
        st->connect_failed++;
    else
        st->opened++;
}

/* Sends what the mode's script says is due now; -1 when the socket broke. */
static int conn_send(struct conn *c, enum mode m, int64_t t)
{
    const char *script = NULL;
    size_t len = 0, n = 1;
    ssize_t w;

    if (m == SILENT || t < c->next_send_ms)
        return 0;
    if (m == KEEPALIVE) {
        script = keepalive_req;
        len = sizeof(keepalive_req) - 1;
        n = len;
    } else if (m == SLOWLORIS) {
        script = trickle_head;
        len = sizeof(trickle_head) - 1;
    } else {
        script = slowbody_head;
        len = sizeof(slowbody_head) - 1;
        if (c->sent < len)
            n = len - c->sent;
    }
    if (c->sent >= len) {
        if (m != SLOWBODY)
            return 0;
        w = send(c->fd, "x", 1, MSG_NOSIGNAL);   /* the body, one byte at a time */
    } else {
        w = send(c->fd, script + c->sent, n, MSG_NOSIGNAL);
    }
    if (w < 0)
        return errno == EAGAIN || errno == ENOTCONN ? 0 : -1;
    c->sent += (size_t)w;
    c->next_send_ms = t + TRICKLE_MS;
    return 0;
}

/* Reads what arrived; -1 once the server closed the connection. */
static int conn_read(struct conn *c)
{
    char buf[4096];
    ssize_t r = recv(c->fd, buf, sizeof(buf), 0);

    if (r > 0) {
        c->answered = 1;
        return 0;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    return -1;
}

/* The probe: one GET /healthz at a time on a fresh connection, driven by
 * the same poll loop as the attack. */
struct probe {
    int fd, sent;
    int64_t started_ms;
    char buf[2048];
    size_t got;
};

static void probe_start(struct probe *p, int port)
{
    memset(p, 0, sizeof(*p));
    p->fd = open_conn(port, 1);
    p->started_ms = now_ms();
}

/* 1 answered 200, -1 failed, 0 still waiting. */
static int probe_step(struct probe *p, short revents)
{
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: allot\r\nConnection: close\r\n\r\n";
    ssize_t r;

    if (p->fd < 0 || now_ms() - p->started_ms > probe_deadline_ms)
        return -1;
    if (!p->sent) {
        if (!(revents & POLLOUT))
            return 0;
        if (send(p->fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
            return -1;
        p->sent = 1;
        return 0;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return 0;
    r = recv(p->fd, p->buf + p->got, sizeof(p->buf) - 1 - p->got, 0);
    if (r <= 0)
        return r < 0 && errno == EAGAIN ? 0 : -1;
    p->got += (size_t)r;
    p->buf[p->got] = 0;
    if (!strstr(p->buf, "\r\n\r\n"))
        return 0;
    return strncmp(p->buf, "HTTP/1.1 200", 12) == 0 ? 1 : -1;
}

static int parse_mode(const char *s, enum mode *m)
{
    static const char *const names[] = {"silent", "slowloris", "keepalive", "slowbody"};
    int i;

    for (i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *m = (enum mode)i;
            return 0;
        }
    return -1;
}

static void attack_step(struct conn *c, short revents, enum mode m, int port, int64_t t,
                        struct stats *st)
{
    if (c->fd < 0) {
        conn_start(c, port, st);
        return;
    }
    if (((revents & (POLLIN | POLLHUP | POLLERR)) && conn_read(c) != 0) ||
        conn_send(c, m, t) != 0) {
        if (!c->answered && t - c->opened_ms > st->longest_open_ms)
            st->longest_open_ms = t - c->opened_ms;
        close(c->fd);
        st->closed_by_server++;
        conn_start(c, port, st);
    }
}

static void probe_done(struct probe *p, int ok, struct stats *st)
{
    int64_t took = now_ms() - p->started_ms;

    st->probes++;
    if (!ok)
        st->probes_failed++;
    if (took > st->probe_max_ms)
        st->probe_max_ms = took;
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
}

/* Runs the attack and the probes, one after the other, until `seconds`
 * pass and the last probe has finished; pfd[n] is the probe's. */
static void run(int port, enum mode m, struct conn *cs, int n, int seconds, struct stats *st)
{
    struct pollfd *pfd = calloc((size_t)n + 1, sizeof(*pfd));
    struct probe p;
    int64_t end = now_ms() + (int64_t)seconds * 1000, next_probe = now_ms() + 200;
    int i, rc;

    memset(&p, 0, sizeof(p));
    p.fd = -1;
    for (i = 0; i < n; i++)
        conn_start(&cs[i], port, st);
    while (pfd && (now_ms() < end || p.started_ms)) {
        int64_t t;
        if (!p.started_ms && now_ms() < end && now_ms() >= next_probe)
            probe_start(&p, port);
        for (i = 0; i < n; i++) {
            pfd[i].fd = cs[i].fd;
            pfd[i].events = POLLIN;
        }
        pfd[n].fd = p.fd;
        pfd[n].events = p.sent ? POLLIN : POLLOUT;
        poll(pfd, (nfds_t)n + 1, 50);
        t = now_ms();
        for (i = 0; i < n; i++)
            attack_step(&cs[i], pfd[i].revents, m, port, t, st);
        if (p.started_ms && (rc = probe_step(&p, pfd[n].revents)) != 0) {
            probe_done(&p, rc > 0, st);
            p.started_ms = 0;
            next_probe = now_ms() + 100;
        }
    }
    free(pfd);
}

int main(int argc, char **argv)
{
    struct rlimit rl;
    struct stats st;
    struct conn *cs;
    enum mode m;
    int port, n, seconds, i;

    if ((argc != 5 && argc != 6) || parse_mode(argv[2], &m) != 0) {
        fprintf(stderr, "usage: connflood PORT silent|slowloris|keepalive|slowbody N SECONDS"
                        " [PROBE_DEADLINE_MS]\n");
        return 2;
    }
    if (argc == 6 && (probe_deadline_ms = atoi(argv[5])) <= 0)
        return 2;
    port = atoi(argv[1]);
    n = atoi(argv[3]);
    seconds = atoi(argv[4]);
    if (port <= 0 || n < 1 || n > MAX_CONNS || seconds < 1)
        return 2;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    cs = calloc((size_t)n, sizeof(*cs));
    if (!cs)
        return 2;
    memset(&st, 0, sizeof(st));
    run(port, m, cs, n, seconds, &st);
    for (i = 0; i < n; i++)
        if (cs[i].fd >= 0)
            close(cs[i].fd);
    free(cs);
    printf("connflood mode=%s connections=%d seconds=%d probes=%ld failed=%ld slowest_ms=%lld"
           " opened=%ld closed=%ld connect_failed=%ld longest_unanswered_ms=%lld\n",
           argv[2], n, seconds, st.probes, st.probes_failed, (long long)st.probe_max_ms, st.opened,
           st.closed_by_server, st.connect_failed, (long long)st.longest_open_ms);
    return st.probes_failed == 0 && st.probes > 0 ? 0 : 1;
}
