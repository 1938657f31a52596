/*
 * http.c: one HTTP/1.1 exchange over plain TCP (http.h).
 *
 * An exchange (http_exchange):
 *   Step 1: split the URL into host, port (default 80) and target;
 *   Step 2: resolve the host and connect to each address in turn, each
 *           within connect_ms (a non-blocking connect and poll);
 *   Step 3: send the request line, Host, the caller's headers,
 *           Content-Length when there is a body, and Connection: close;
 *   Step 4: read the status line and the headers (a 1xx answer is skipped),
 *           then the body as Content-Length, chunked transfer coding, or up
 *           to the end of the connection says, handing each piece to
 *           on_body as it arrives.
 * Every wait is a poll bounded by what is left of total_ms.
 *
 * Invariants:
 *   1. A request goes out whole or the exchange fails: no retry, since a
 *      submission must not be sent twice.
 *   2. No signal: writes use MSG_NOSIGNAL.
 *   3. The socket is closed on every path out.
 */
#define _GNU_SOURCE
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX (64 * 1024)   /* status line and headers */
#define IO_CHUNK 16384

struct conn {
    int fd;
    long long deadline_ms;     /* 0: none */
    char buf[IO_CHUNK];
    size_t off, len;           /* unread bytes buf[off .. len) */
    int eof;
};

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return rc;
}

/* Waits for `events` on fd until the deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, long long deadline_ms)
{
    struct pollfd p = {fd, events, 0};
    int rc;

    for (;;) {
        long long left = deadline_ms ? deadline_ms - now_ms() : -1;
        if (deadline_ms && left <= 0)
            return 0;
        rc = poll(&p, 1, left > 2000000000LL ? 2000000000 : (int)left);
        if (rc > 0)
            return 1;
        if (rc == 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

/* ---- Step 1 ---- */

struct target {
    char host[256];
    char port[16];
    const char *path;          /* from the URL, "/" when it has none */
    const char *authority;     /* host[:port] as written, for Host: */
    size_t authority_len;
};

static int split_url(const char *url, struct target *t)
{
    const char *p, *end, *colon = NULL;
    size_t n;

    if (strncasecmp(url, "http://", 7) != 0)
        return -1;
    p = url + 7;
    end = p + strcspn(p, "/?#");
    t->authority = p;
    t->authority_len = (size_t)(end - p);
    t->path = *end == '/' ? end : "/";
    if (*end && *end != '/')
        return -1; /* "http://host?x": no target this client can send */
    if (*p == '[') { /* [IPv6] */
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (!close)
            return -1;
        n = (size_t)(close - p - 1);
        if (n == 0 || n >= sizeof(t->host))
            return -1;
        memcpy(t->host, p + 1, n);
        t->host[n] = 0;
        if (close + 1 < end && close[1] != ':')
            return -1;
        colon = close + 1 < end ? close + 1 : NULL;
    } else {
        colon = memchr(p, ':', (size_t)(end - p));
        n = (size_t)((colon ? colon : end) - p);
        if (n == 0 || n >= sizeof(t->host) || memchr(p, '@', (size_t)(end - p)))
            return -1;
        memcpy(t->host, p, n);
        t->host[n] = 0;
    }
    if (colon) {
        n = (size_t)(end - colon - 1);
        if (n == 0 || n >= sizeof(t->port) || strspn(colon + 1, "0123456789") < n)
            return -1;
        memcpy(t->port, colon + 1, n);
        t->port[n] = 0;
    } else {
        strcpy(t->port, "80");
    }
    return 0;
}

/* ---- Step 2 ---- */

static int connect_one(const struct addrinfo *ai, long connect_ms, long long deadline_ms,
                       int *timed_out)
{
    long long until = now_ms() + connect_ms;
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int so_err = 0, r;
    socklen_t len = sizeof(so_err);

    if (deadline_ms && deadline_ms < until)
        until = deadline_ms;
    if (fd < 0)
        return -1;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
        goto bad;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS)
        goto bad;
    r = wait_fd(fd, POLLOUT, until);
    if (r == 0)
        *timed_out = 1;
    if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_err, &len) != 0 || so_err != 0) {
        /* the connect's own failure (ECONNREFUSED ...), not the
         * EINPROGRESS the non-blocking connect() left in errno */
        if (so_err != 0)
            errno = so_err;
        else if (r == 0)
            errno = ETIMEDOUT;
        goto bad;
    }
    return fd;
bad:
    so_err = errno;
    close(fd);
    errno = so_err;
    return -1;
}

static int open_conn(const struct target *t, const struct http_req *rq, struct conn *c,
                     char *err, size_t err_len)
{
    struct addrinfo hints, *res = NULL, *ai;
    int rc, timed_out = 0, last_errno = 0;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(t->host, t->port, &hints, &res);
    if (rc != 0)
        return fail(err, err_len, HTTP_ERESOLVE, "Could not resolve host: %s (%s)", t->host,
                    gai_strerror(rc));
    c->fd = -1;
    for (ai = res; ai && c->fd < 0; ai = ai->ai_next) {
        c->fd = connect_one(ai, rq->connect_ms, c->deadline_ms, &timed_out);
        if (c->fd < 0)
            last_errno = errno;
    }
    freeaddrinfo(res);
    if (c->fd >= 0)
        return HTTP_OK;
    if (timed_out)
        return fail(err, err_len, HTTP_ECONNECT_TIMEOUT, "Connection timed out after %ld ms",
                    rq->connect_ms);
    return fail(err, err_len, HTTP_ECONNECT, "Failed to connect to %s port %s: %s", t->host,
                t->port, strerror(last_errno ? last_errno : ECONNREFUSED));
}

/* ---- Step 3 ---- */

static int send_all(struct conn *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = wait_fd(c->fd, POLLOUT, c->deadline_ms);
            if (r <= 0)
                return r == 0 ? HTTP_ETIMEOUT : HTTP_EIO;
            continue;
        }
        if (n <= 0)
            return HTTP_EIO;
        data += n;
        len -= (size_t)n;
    }
    return HTTP_OK;
}

static char *request_head(const struct target *t, const struct http_req *rq)
{
    size_t size = strlen(rq->method) + strlen(t->path) + t->authority_len + 128;
    char *h, *o;
    int i;

    for (i = 0; i < rq->n_headers; i++)
        size += strlen(rq->headers[i]) + 2;
    h = malloc(size);
    if (!h)
        return NULL;
    o = h + sprintf(h, "%s %s HTTP/1.1\r\nHost: %.*s\r\n", rq->method, t->path,
                    (int)t->authority_len, t->authority);
    for (i = 0; i < rq->n_headers; i++)
        o += sprintf(o, "%s\r\n", rq->headers[i]);
    if (rq->has_body)
        o += sprintf(o, "Content-Length: %zu\r\n", rq->len);
    sprintf(o, "Connection: close\r\n\r\n");
    return h;
}

/* ---- Step 4 ---- */

/* Reads more into c->buf (keeping the unread bytes): HTTP_OK, or an error;
 * c->eof at the end of the connection. */
static int fill(struct conn *c)
{
    ssize_t n;
    int r;

    if (c->off > 0) {
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
    }
    if (c->len == sizeof(c->buf))
        return HTTP_EPROTO;
    for (;;) {
        n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
        if (n > 0) {
            c->len += (size_t)n;
            return HTTP_OK;
        }
        if (n == 0) {
            c->eof = 1;
            return HTTP_OK;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return HTTP_EIO;
        r = wait_fd(c->fd, POLLIN, c->deadline_ms);
        if (r <= 0)
            return r == 0 ? HTTP_ETIMEOUT : HTTP_EIO;
    }
}

/* One line (CRLF or LF ended) into line, at most cap - 1 bytes. */
static int read_line(struct conn *c, char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(c->buf + c->off, '\n', c->len - c->off);
        if (nl) {
            size_t n = (size_t)(nl - (c->buf + c->off));
            if (n > 0 && nl[-1] == '\r')
                n--;
            if (n >= cap)
                return HTTP_EPROTO;
            memcpy(line, c->buf + c->off, n);
            line[n] = 0;
            c->off = (size_t)(nl - c->buf) + 1;
            return HTTP_OK;
        }
        if (c->eof)
            return HTTP_EPROTO;
        int rc = fill(c);
        if (rc != HTTP_OK)
            return rc;
    }
}

struct head {
    long status;
    long long length;          /* -1: none given */
    int chunked;
};

static int read_head(struct conn *c, struct head *h)
{
    char line[4096];
    size_t total = 0;
    int rc;

    do {
        h->length = -1;
        h->chunked = 0;
        rc = read_line(c, line, sizeof(line));
        if (rc != HTTP_OK)
            return rc;
        if (strncmp(line, "HTTP/1.", 7) != 0 || !line[7] ||
            sscanf(line + 8, " %ld", &h->status) != 1 ||
            h->status < 100 || h->status > 999)
            return HTTP_EPROTO;
        for (;;) {
            rc = read_line(c, line, sizeof(line));
            if (rc != HTTP_OK)
                return rc;
            total += strlen(line) + 2;
            if (total > HEAD_MAX)
                return HTTP_EPROTO;
            if (!line[0])
                break;
            if (strncasecmp(line, "Content-Length:", 15) == 0)
                h->length = strtoll(line + 15, NULL, 10);
            else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 &&
                     strcasestr(line + 18, "chunked"))
                h->chunked = 1;
        }
    } while (h->status < 200);
    return HTTP_OK;
}

/* Hands up to `want` bytes (-1: to the end of the connection) to on_body. */
static int pass_body(struct conn *c, const struct http_req *rq, long status, long long want)
{
    int rc;

    while (want != 0) {
        size_t have = c->len - c->off, n;
        if (have == 0) {
            if (c->eof)
                return want < 0 ? HTTP_OK : HTTP_EIO;
            rc = fill(c);
            if (rc != HTTP_OK)
                return rc;
            continue;
        }
        n = want < 0 || (long long)have < want ? have : (size_t)want;
        if (rq->on_body(c->buf + c->off, n, status, rq->arg) != 0)
            return HTTP_EWRITE;
        c->off += n;
        if (want > 0)
            want -= (long long)n;
    }
    return HTTP_OK;
}

static int read_chunked(struct conn *c, const struct http_req *rq, long status)
{
    char line[256];
    long long size;
    int rc;

    for (;;) {
        char *end;
        rc = read_line(c, line, sizeof(line));
        if (rc != HTTP_OK)
            return rc;
        size = strtoll(line, &end, 16);
        if (end == line || size < 0)
            return HTTP_EPROTO;
        if (size == 0)
            break;
        rc = pass_body(c, rq, status, size);
        if (rc == HTTP_OK)
            rc = read_line(c, line, sizeof(line)); /* the CRLF after the data */
        if (rc != HTTP_OK)
            return rc;
    }
    do { /* trailers, up to the empty line */
        rc = read_line(c, line, sizeof(line));
    } while (rc == HTTP_OK && line[0]);
    return rc;
}

static int read_answer(struct conn *c, const struct http_req *rq, long *status)
{
    struct head h;
    int rc = read_head(c, &h);

    if (rc != HTTP_OK)
        return rc;
    *status = h.status;
    if (strcmp(rq->method, "HEAD") == 0 || h.status == 204 || h.status == 304)
        return HTTP_OK;
    if (h.chunked)
        return read_chunked(c, rq, h.status);
    return pass_body(c, rq, h.status, h.length);
}

int http_exchange(const struct http_req *rq, long *status, char *err, size_t err_len)
{
    static const char *const why[] = {
        [HTTP_ETIMEOUT] = "Operation timed out",
        [HTTP_EWRITE] = "Failure writing the answer",
        [HTTP_EPROTO] = "The answer is not HTTP/1.x",
        [HTTP_EIO] = "The connection failed",
    };
    struct target t;
    struct conn *c = calloc(1, sizeof(*c));
    char *head = NULL;
    int rc;

    *status = 0;
    err[0] = 0;
    if (!c)
        return fail(err, err_len, HTTP_EIO, "out of memory");
    c->fd = -1;
    c->deadline_ms = rq->total_ms > 0 ? now_ms() + rq->total_ms : 0;
    if (split_url(rq->url, &t) != 0) {
        rc = fail(err, err_len, HTTP_EURL, "URL using bad/illegal format");
        goto out;
    }
    rc = open_conn(&t, rq, c, err, err_len);
    if (rc != HTTP_OK)
        goto out;
    head = request_head(&t, rq);
    rc = head ? send_all(c, head, strlen(head)) : HTTP_EIO;
    if (rc == HTTP_OK && rq->has_body)
        rc = send_all(c, rq->body, rq->len);
    if (rc == HTTP_OK)
        rc = read_answer(c, rq, status);
    if (rc != HTTP_OK && !err[0])
        snprintf(err, err_len, "%s", why[rc] ? why[rc] : "error");
out:
    if (c->fd >= 0)
        close(c->fd);
    free(head);
    free(c);
    return rc;
}
