/*
 * openloop.c: allot-bench-openloop, an open-loop HTTP/1.1 load generator
 * for bench/api/run.sh: requests at a fixed rate over keep-alive
 * connections, each one's latency counted from when it was due.
 *
 * wrk (closed loop) sends a connection's next request when its answer
 * comes, so with C connections the mean latency is C over the rate
 * (Little's law) and a percentile at saturation measures the backlog the
 * clients themselves keep full. This sends request i at start + i / rate,
 * whatever came back:
 *   1. request i is due at start + i / rate; when due it goes out on the
 *      next idle connection after the one used last (so none idles past
 *      the server's keep-alive timeout; one the server closed while idle
 *      is opened again), or waits in a first-in first-out backlog until
 *      one is idle (one request at a time per connection, no pipelining);
 *   2. its latency runs from the time it was due to the end of its answer,
 *      so time spent in the backlog counts (no coordinated omission: a
 *      server stall shows in every request due during it, as wrk2 counts);
 *   3. requests due in the first --warmup seconds are sent but not
 *      counted; the run ends once every request due before --duration has
 *      its answer (or --drain seconds later, the rest counted as lost).
 * Answers are read by their Content-Length or chunked encoding; a status
 * other than 2xx counts as an error, and the run's exit status is 1 when
 * any request erred or was lost.
 *
 * The body's "{n}" is replaced by the request's number, so submissions
 * can have unique names. One thread, epoll, nanosecond timeouts
 * (epoll_pwait2).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEADERS 8
#define REQ_CAP 8192
#define RESP_CAP 65536

struct options {
    const char *host, *path, *method, *body, *trace;
    const char *headers[MAX_HEADERS];
    int n_headers, port, connections;
    double rate, duration, warmup, drain;
};

struct conn {
    int fd;
    int64_t due_ns;          /* the request in flight: when it was due; -1: idle */
    long req;                /* its number */
    char resp[RESP_CAP];
    size_t got;
};

struct run {
    struct options o;
    struct conn *conns;
    int epfd;
    int64_t start_ns;
    long n_due;              /* requests due before the end */
    long next;               /* next request number to become due */
    long *backlog;           /* due requests waiting for a connection (ring) */
    long bl_head, bl_n, bl_max;
    int rr;                  /* the connection used last */
    double *lat_ms;          /* counted requests' latencies */
    FILE *trace;             /* --trace: each answer's due time and latency */
    long n_lat, n_done, n_err, n_lost;
};

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t due_of(const struct run *r, long i)
{
    return r->start_ns + (int64_t)((double)i * 1e9 / r->o.rate);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: allot-bench-openloop --port N [--host 127.0.0.1] --path P [--method GET|POST]\n"
            "         [--body TEXT] [--header 'Name: value']... --rate PER_SECOND\n"
            "         [--connections 64] [--duration 10] [--warmup 1] [--drain 5] [--trace FILE]\n"
            "  requests go out at --rate whatever comes back; each latency runs from when\n"
            "  the request was due; \"{n}\" in --body is the request's number; --trace writes\n"
            "  each answer's due time and latency (ms) to FILE\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
    int i;

    memset(o, 0, sizeof(*o));
    o->host = "127.0.0.1";
    o->method = "GET";
    o->connections = 64;
    o->duration = 10;
    o->warmup = 1;
    o->drain = 5;
    for (i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--host")) o->host = v;
        else if (!strcmp(k, "--port")) o->port = atoi(v);
        else if (!strcmp(k, "--path")) o->path = v;
        else if (!strcmp(k, "--method")) o->method = v;
        else if (!strcmp(k, "--body")) o->body = v;
        else if (!strcmp(k, "--rate")) o->rate = atof(v);
        else if (!strcmp(k, "--connections")) o->connections = atoi(v);
        else if (!strcmp(k, "--duration")) o->duration = atof(v);
        else if (!strcmp(k, "--warmup")) o->warmup = atof(v);
        else if (!strcmp(k, "--drain")) o->drain = atof(v);
        else if (!strcmp(k, "--trace")) o->trace = v;
        else if (!strcmp(k, "--header") && o->n_headers < MAX_HEADERS)
            o->headers[o->n_headers++] = v;
        else
            return -1;
    }
    if (i != argc || o->port <= 0 || !o->path || o->rate <= 0 || o->connections <= 0 ||
        o->duration <= o->warmup || o->warmup < 0)
        return -1;
    return 0;
}

static int connect_one(const struct options *o)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)o->port);
    if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The request's bytes, with "{n}" in the body replaced by its number. */
static int format_request(const struct options *o, long n, char *out, size_t cap)
{
    char body[REQ_CAP], num[24];
    const char *b = o->body ? o->body : "", *at;
    size_t len = 0;
    int used, h;

    snprintf(num, sizeof(num), "%ld", n);
    while ((at = strstr(b, "{n}")) != NULL && len + (size_t)(at - b) + strlen(num) < sizeof(body)) {
        memcpy(body + len, b, (size_t)(at - b));
        len += (size_t)(at - b);
        memcpy(body + len, num, strlen(num));
        len += strlen(num);
        b = at + 3;
    }
    if (len + strlen(b) >= sizeof(body))
        return -1;
    memcpy(body + len, b, strlen(b) + 1);
    len += strlen(b);
    used = snprintf(out, cap, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n", o->method, o->path, o->host,
                    o->port);
    for (h = 0; h < o->n_headers && used > 0 && (size_t)used < cap; h++)
        used += snprintf(out + used, cap - (size_t)used, "%s\r\n", o->headers[h]);
    if (used > 0 && (size_t)used < cap && o->body)
        used += snprintf(out + used, cap - (size_t)used, "Content-Length: %zu\r\n", len);
    if (used > 0 && (size_t)used < cap)
        used += snprintf(out + used, cap - (size_t)used, "\r\n%s", o->body ? body : "");
    return used > 0 && (size_t)used < cap ? used : -1;
}

static int send_request(struct run *r, struct conn *c, long n, int64_t due)
{
    char req[REQ_CAP];
    int len = format_request(&r->o, n, req, sizeof(req)), off = 0;

    if (len < 0)
        return -1;
    while (off < len) {   /* loopback takes a request this small at once */
        ssize_t w = write(c->fd, req + off, (size_t)(len - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (int)w;
    }
    c->due_ns = due;
    c->req = n;
    c->got = 0;
    return 0;
}

/* Case-insensitive search for a header's value in the head [p, end). */
static const char *header_value(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);

    for (; p + n < end; p++)
        if ((p[-1] == '\n') && strncasecmp(p, name, n) == 0 && p[n] == ':')
            return p + n + 1;
    return NULL;
}

/* Whether the answer in c->resp is whole; its status in *status. A
 * chunked body is whole once its last chunk (size 0) and the blank line
 * after it came. */
static int response_complete(const struct conn *c, int *status)
{
    const char *r = c->resp, *end = r + c->got, *head_end = NULL, *v;
    size_t i;

    for (i = 3; i < c->got; i++)
        if (r[i - 3] == '\r' && r[i - 2] == '\n' && r[i - 1] == '\r' && r[i] == '\n') {
            head_end = r + i + 1;
            break;
        }
    if (!head_end || c->got < 12)
        return 0;
    *status = atoi(r + 9);
    if ((v = header_value(r + 1, head_end, "Content-Length")) != NULL)
        return (size_t)(end - head_end) >= (size_t)strtoul(v, NULL, 10);
    if ((v = header_value(r + 1, head_end, "Transfer-Encoding")) != NULL) {
        const char *p = head_end;
        for (;;) {
            char *after;
            unsigned long size = strtoul(p, &after, 16);
            const char *line_end = memchr(after, '\n', (size_t)(end - after));
            if (after == p || !line_end)
                return 0;
            p = line_end + 1 + size;
            if (size == 0)
                return end - p >= 2;
            p += 2;
            if (p > end)
                return 0;
        }
    }
    return 1;   /* no body */
}

static void dispatch(struct run *r, struct conn *c, long n, int64_t due)
{
    if (send_request(r, c, n, due) != 0) {
        fprintf(stderr, "openloop: could not send on a connection\n");
        r->n_err++;
        r->n_done++;
        c->due_ns = -1;
    }
}

/* The next idle connection after the last one used, so that every
 * connection carries its share and none sits idle long enough for the
 * server's keep-alive timeout to close it. */
static struct conn *idle_conn(struct run *r)
{
    int i;

    for (i = 0; i < r->o.connections; i++) {
        struct conn *c = &r->conns[(r->rr + 1 + i) % r->o.connections];
        if (c->due_ns < 0) {
            r->rr = (int)(c - r->conns);
            return c;
        }
    }
    return NULL;
}

/* Every request due by `now` goes out, or into the backlog. */
static void release_due(struct run *r, int64_t now)
{
    while (r->next < r->n_due && due_of(r, r->next) <= now) {
        struct conn *c = r->bl_n == 0 ? idle_conn(r) : NULL;
        if (c)
            dispatch(r, c, r->next, due_of(r, r->next));
        else {
            r->backlog[(r->bl_head + r->bl_n) % r->n_due] = r->next;
            r->bl_n++;
            if (r->bl_n > r->bl_max)
                r->bl_max = r->bl_n;
        }
        r->next++;
    }
}

static void finish_request(struct run *r, struct conn *c, int status, int64_t now)
{
    if (status < 200 || status > 299)
        r->n_err++;
    if (due_of(r, c->req) >= r->start_ns + (int64_t)(r->o.warmup * 1e9))
        r->lat_ms[r->n_lat++] = (double)(now - c->due_ns) / 1e6;
    if (r->trace)
        fprintf(r->trace, "%.3f %.3f\n", (double)(c->due_ns - r->start_ns) / 1e6,
                (double)(now - c->due_ns) / 1e6);
    r->n_done++;
    c->due_ns = -1;
    if (r->bl_n > 0) {
        long n = r->backlog[r->bl_head];
        r->bl_head = (r->bl_head + 1) % r->n_due;
        r->bl_n--;
        dispatch(r, c, n, due_of(r, n));
    }
}

static int open_one(struct run *r, struct conn *c)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

    c->due_ns = -1;
    c->fd = connect_one(&r->o);
    if (c->fd < 0 || epoll_ctl(r->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        fprintf(stderr, "openloop: cannot connect to %s:%d\n", r->o.host, r->o.port);
        return -1;
    }
    return 0;
}

static int open_connections(struct run *r)
{
    int i;

    for (i = 0; i < r->o.connections; i++)
        if (open_one(r, &r->conns[i]) != 0)
            return -1;
    return 0;
}

static int read_answer(struct run *r, struct conn *c)
{
    int status = 0;
    ssize_t got;

    for (;;) {
        got = read(c->fd, c->resp + c->got, sizeof(c->resp) - 1 - c->got);
        if (got < 0 && errno == EINTR)
            continue;
        break;
    }
    if (got == 0 && c->due_ns < 0) {   /* the server closed an idle connection */
        epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        return open_one(r, c);
    }
    if (got <= 0 || c->due_ns < 0) {
        fprintf(stderr, "openloop: a connection closed or answered unasked\n");
        return -1;
    }
    c->got += (size_t)got;
    c->resp[c->got] = '\0';
    if (c->got >= sizeof(c->resp) - 1) {
        fprintf(stderr, "openloop: an answer larger than %d bytes\n", RESP_CAP);
        return -1;
    }
    if (response_complete(c, &status))
        finish_request(r, c, status, now_ns());
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *v, long n, double p)
{
    long i = (long)(p / 100.0 * (double)n + 0.999999) - 1;

    if (n == 0)
        return 0;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void report(struct run *r, double sent_s)
{
    qsort(r->lat_ms, (size_t)r->n_lat, sizeof(double), cmp_double);
    printf("  offered %.0f/s over %d connections for %.1f s (first %.1f s not counted): "
           "%ld answered, %.0f/s\n",
           r->o.rate, r->o.connections, r->o.duration, r->o.warmup, r->n_done,
           (double)r->n_done / sent_s);
    printf("  latency from due: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms "
           "(%ld counted)\n",
           percentile(r->lat_ms, r->n_lat, 50), percentile(r->lat_ms, r->n_lat, 90),
           percentile(r->lat_ms, r->n_lat, 99), percentile(r->lat_ms, r->n_lat, 99.9),
           r->n_lat ? r->lat_ms[r->n_lat - 1] : 0.0, r->n_lat);
    printf("  most requests waiting for a connection at once: %ld; not 2xx: %ld; lost: %ld\n",
           r->bl_max, r->n_err, r->n_lost);
}


static int run_load(struct run *r)
{
    struct epoll_event evs[64];
    int64_t end_ns, give_up_ns;
    int i, n;

    r->start_ns = now_ns();
    if (r->trace)
        fprintf(r->trace, "# start %lld ns (CLOCK_MONOTONIC); due ms, latency ms\n",
                (long long)r->start_ns);
    end_ns = r->start_ns + (int64_t)(r->o.duration * 1e9);
    give_up_ns = end_ns + (int64_t)(r->o.drain * 1e9);
    while (r->n_done < r->n_due) {
        int64_t now = now_ns(), wait_ns;
        struct timespec ts;
        if (now >= give_up_ns) {
            r->n_lost = r->n_due - r->n_done;
            break;
        }
        release_due(r, now);
        wait_ns = r->next < r->n_due ? due_of(r, r->next) - now : give_up_ns - now;
        if (wait_ns < 0)
            wait_ns = 0;
        ts.tv_sec = wait_ns / 1000000000;
        ts.tv_nsec = wait_ns % 1000000000;
        n = epoll_pwait2(r->epfd, evs, 64, &ts, NULL);
        if (n < 0 && errno != EINTR)
            return -1;
        for (i = 0; i < n; i++)
            if (read_answer(r, evs[i].data.ptr) != 0)
                return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct run r;
    int rc = 2;

    memset(&r, 0, sizeof(r));
    if (parse_options(argc, argv, &r.o) != 0) {
        usage();
        return 2;
    }
    r.n_due = (long)(r.o.rate * r.o.duration);
    r.conns = calloc((size_t)r.o.connections, sizeof(*r.conns));
    r.backlog = calloc((size_t)r.n_due + 1, sizeof(long));
    r.lat_ms = calloc((size_t)r.n_due + 1, sizeof(double));
    r.epfd = epoll_create1(0);
    if (r.o.trace && !(r.trace = fopen(r.o.trace, "w")))
        goto out;
    if (!r.conns || !r.backlog || !r.lat_ms || r.epfd < 0 || open_connections(&r) != 0)
        goto out;
    if (run_load(&r) != 0) {
        fprintf(stderr, "openloop: the run failed\n");
        goto out;
    }
    report(&r, r.o.duration);
    rc = r.n_err || r.n_lost ? 1 : 0;
out:
    if (r.trace)
        fclose(r.trace);
    free(r.conns);
    free(r.backlog);
    free(r.lat_ms);
    return rc;
}
