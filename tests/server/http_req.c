/*
 * http_req.c: the end-to-end tests' HTTP client (lib.sh's req): one
 * request over a fresh connection, the reply's body written out, then a
 * newline and the three-digit status, the way `curl -s -w '\n%{http_code}'`
 * writes them. curl maps about thirty libraries at every start (25 ms of
 * CPU a call on a 2-core VM, a quarter of what the shell suites spend);
 * this one maps libc alone.
 *
 *   http_req METHOD URL [-H 'Name: value']... [-d BODY]
 *
 * URL is http://HOST[:PORT]/PATH (no TLS, no user info), sent as given.
 *
 * One run:
 *   Step 1: parse the URL; connect to the first address HOST resolves to
 *           that accepts;
 *   Step 2: send the request line, Host, Accept, the headers given,
 *           Content-Length when there is a body, Connection: close, then
 *           the body;
 *   Step 3: read the status line and the headers;
 *   Step 4: write the body: by Content-Length, chunked, or until the
 *           server closes (none for HEAD, 1xx, 204 and 304);
 *   Step 5: write "\n" and the status.
 *
 * Invariants:
 *   1. What goes out is exactly a well-formed HTTP/1.1 request: a header
 *      or URL holding CR or LF is refused (exit 2), never sent.
 *   2. Like curl, a reply that never came (no connection, closed before
 *      its status line) prints status 000 and exits non-zero: 7 when no
 *      connection was made, 52 when the server closed without a reply;
 *      one that broke off after its status line prints that status and
 *      exits 56; a reply read whole exits 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_CONNECT 7
#define EXIT_EMPTY 52
#define EXIT_RECV 56
#define MAX_HEADERS 32
#define HEAD_MAX 65536

struct request {
    const char *method;
    char host[256], port[8];
    const char *path;
    const char *headers[MAX_HEADERS];
    int n_headers;
    const char *body;
};

/* A buffered reader over the connection. */
struct conn {
    int fd;
    char buf[65536];
    size_t pos, len;
};

static int conn_fill(struct conn *c)
{
    ssize_t n;
    do
        n = read(c->fd, c->buf, sizeof c->buf);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return -1;
    c->pos = 0;
    c->len = (size_t)n;
    return 0;
}

/* One line, its CR LF (or LF) cut off; -1 at end of input or over max. */
static int conn_line(struct conn *c, char *line, size_t max)
{
    size_t n = 0;
    for (;;) {
        char ch;
        if (c->pos == c->len && conn_fill(c) != 0)
            return -1;
        ch = c->buf[c->pos++];
        if (ch == '\n')
            break;
        if (n + 1 >= max)
            return -1;
        line[n++] = ch;
    }
    if (n > 0 && line[n - 1] == '\r')
        n--;
    line[n] = '\0';
    return 0;
}

/* Copies want bytes (or, with want < 0, everything until the server
 * closes) to stdout. */
static int conn_copy(struct conn *c, long long want)
{
    while (want != 0) {
        size_t n;
        if (c->pos == c->len && conn_fill(c) != 0)
            return want < 0 ? 0 : -1;
        n = c->len - c->pos;
        if (want > 0 && (long long)n > want)
            n = (size_t)want;
        if (fwrite(c->buf + c->pos, 1, n, stdout) != n)
            return -1;
        c->pos += n;
        if (want > 0)
            want -= (long long)n;
    }
    return 0;
}

static int has_crlf(const char *s)
{
    return strpbrk(s, "\r\n") != NULL;
}

/* Step 1's parse: http://HOST[:PORT]/PATH. */
static int parse_url(struct request *r, const char *url)
{
    const char *host = url + 7, *end, *colon;
    size_t host_len;
    if (strncmp(url, "http://", 7) != 0 || has_crlf(url))
        return -1;
    end = host + strcspn(host, "/?");
    r->path = *end == '/' ? end : "/";
    if (*end == '?')
        return -1;
    colon = memchr(host, ':', (size_t)(end - host));
    host_len = (size_t)((colon ? colon : end) - host);
    if (host_len == 0 || host_len >= sizeof r->host)
        return -1;
    memcpy(r->host, host, host_len);
    r->host[host_len] = '\0';
    if (colon) {
        size_t port_len = (size_t)(end - colon - 1);
        if (port_len == 0 || port_len >= sizeof r->port)
            return -1;
        memcpy(r->port, colon + 1, port_len);
        r->port[port_len] = '\0';
    } else {
        strcpy(r->port, "80");
    }
    return 0;
}

static int parse_args(struct request *r, int argc, char **argv)
{
    int i;
    if (argc < 3 || parse_url(r, argv[2]) != 0 || has_crlf(argv[1]) || !*argv[1])
        return -1;
    r->method = argv[1];
    for (i = 3; i < argc; i += 2) {
        if (i + 1 >= argc)
            return -1;
        if (strcmp(argv[i], "-H") == 0) {
            if (r->n_headers == MAX_HEADERS || has_crlf(argv[i + 1]))
                return -1;
            r->headers[r->n_headers++] = argv[i + 1];
        } else if (strcmp(argv[i], "-d") == 0) {
            r->body = argv[i + 1];
        } else {
            return -1;
        }
    }
    return 0;
}

static int connect_to(const struct request *r)
{
    struct addrinfo hints = {0}, *res = NULL, *ai;
    int fd = -1;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(r->host, r->port, &hints, &res) != 0)
        return -1;
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Step 2. */
static int send_request(int fd, const struct request *r)
{
    char head[HEAD_MAX];
    size_t n;
    int i, len;
    len = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: */*\r\n",
                   r->method, r->path, r->host, r->port);
    if (len < 0 || (size_t)len >= sizeof head)
        return -1;
    n = (size_t)len;
    for (i = 0; i < r->n_headers; i++) {
        len = snprintf(head + n, sizeof head - n, "%s\r\n", r->headers[i]);
        if (len < 0 || (size_t)len >= sizeof head - n)
            return -1;
        n += (size_t)len;
    }
    if (r->body)
        len = snprintf(head + n, sizeof head - n, "Content-Length: %zu\r\n", strlen(r->body));
    else
        len = 0;
    if (len < 0 || (size_t)len >= sizeof head - n)
        return -1;
    n += (size_t)len;
    len = snprintf(head + n, sizeof head - n, "Connection: close\r\n\r\n");
    if (len < 0 || (size_t)len >= sizeof head - n)
        return -1;
    n += (size_t)len;
    if (send_all(fd, head, n) != 0)
        return -1;
    return r->body ? send_all(fd, r->body, strlen(r->body)) : 0;
}

/* Step 4 for a chunked body. */
static int copy_chunked(struct conn *c)
{
    char line[1024];
    for (;;) {
        char *end;
        long long size;
        if (conn_line(c, line, sizeof line) != 0)
            return -1;
        size = strtoll(line, &end, 16);
        if (end == line || size < 0)
            return -1;
        if (size == 0)
            break;
        if (conn_copy(c, size) != 0 || conn_line(c, line, sizeof line) != 0 || line[0])
            return -1;
    }
    do {   /* the trailer, up to its empty line */
        if (conn_line(c, line, sizeof line) != 0)
            return -1;
    } while (line[0]);
    return 0;
}

/* Steps 3-4; *status is the reply's status (0 when none came). */
static int read_reply(struct conn *c, const struct request *r, int *status)
{
    char line[8192];
    long long length = -1;
    int chunked = 0;
    *status = 0;
    if (conn_line(c, line, sizeof line) != 0)
        return EXIT_EMPTY;
    if (strncmp(line, "HTTP/1.", 7) != 0 || sscanf(line + 8, " %3d", status) != 1)
        return EXIT_RECV;
    for (;;) {
        if (conn_line(c, line, sizeof line) != 0)
            return EXIT_RECV;
        if (!line[0])
            break;
        if (strncasecmp(line, "Content-Length:", 15) == 0)
            length = strtoll(line + 15, NULL, 10);
        else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 && strstr(line + 18, "chunked"))
            chunked = 1;
    }
    if (strcmp(r->method, "HEAD") == 0 || *status / 100 == 1 || *status == 204 ||
        *status == 304)
        return 0;
    if (chunked)
        return copy_chunked(c) == 0 ? 0 : EXIT_RECV;
    return conn_copy(c, length) == 0 ? 0 : EXIT_RECV;
}

int main(int argc, char **argv)
{
    static struct conn c;
    struct request r = {0};
    int rc, status = 0;
    if (parse_args(&r, argc, argv) != 0) {
        fprintf(stderr, "usage: http_req METHOD http://HOST[:PORT]/PATH "
                        "[-H 'Name: value']... [-d BODY] (no CR or LF in any)\n");
        return EXIT_USAGE;
    }
    c.fd = connect_to(&r);
    if (c.fd < 0) {
        rc = EXIT_CONNECT;
    } else {
        rc = send_request(c.fd, &r) == 0 ? read_reply(&c, &r, &status) : EXIT_RECV;
        close(c.fd);
    }
    printf("\n%03d", status);
    return fflush(stdout) == 0 ? rc : EXIT_RECV;
}
