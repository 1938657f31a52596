/*
 * fuzz_http_reply.c: the CLI's own HTTP/1.1 client (cli/http.c) reading
 * a hostile server's answer, over a real loopback connection.
 *
 * A thread of this target listens on 127.0.0.1. For each input:
 *   Step 1: the fuzzer's thread calls http_exchange() (GET, a 10 s limit);
 *   Step 2: the server thread accepts, reads the request's head, sends the
 *           input as the whole answer, shuts its side and waits for the
 *           client to close (so no unread byte turns the close into a
 *           reset that would cut the answer short);
 *   Step 3: the answer http_exchange() gave is held against ref_read(), a
 *           second reading of the same bytes from memory, with no buffer
 *           to refill: the status line (1xx answers skipped), the headers
 *           (a line ends at LF, a CR before it dropped; 4,095 bytes a line,
 *           64 KiB of headers), then the body by chunked coding, by
 *           Content-Length, or to the end.
 *
 * Checked: http_exchange() returns one of its codes and never times out;
 * it succeeds exactly when ref_read() finds a whole answer, and then with
 * the same status and the same body bytes, whatever the pieces recv()
 * happened to deliver and wherever the client's 16 KiB buffer was cut.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "http.h"

#define LINE_MAX_REF 4096      /* http.c's line buffer */
#define CHUNK_LINE_MAX 256     /* http.c's chunk-size line buffer */
#define HEAD_MAX_REF (64 * 1024)

/* ---- Step 2: the server ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const uint8_t *data;   /* the answer to send; NULL: none pending */
    size_t size;
    int served;
    int listen_fd;
    int port;
} srv = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, -1, 0};

static void read_request(int fd)
{
    char buf[4096];
    size_t have = 0;
    ssize_t n;

    while (have < sizeof(buf) - 1 && (n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0)) > 0) {
        have += (size_t)n;
        buf[have] = 0;
        if (strstr(buf, "\r\n\r\n"))
            return;
    }
}

static void serve_one(int fd, const uint8_t *data, size_t size)
{
    char sink[4096];
    size_t off = 0;
    ssize_t n;

    read_request(fd);
    while (off < size && (n = send(fd, data + off, size - off, MSG_NOSIGNAL)) > 0)
        off += (size_t)n;
    shutdown(fd, SHUT_WR);
    while (recv(fd, sink, sizeof(sink), 0) > 0)
        ;
    close(fd);
}

static void *server_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(srv.listen_fd, NULL, NULL);
        const uint8_t *data;
        size_t size;

        if (fd < 0)
            continue;
        pthread_mutex_lock(&srv.mu);
        data = srv.data;
        size = srv.size;
        pthread_mutex_unlock(&srv.mu);
        if (data)
            serve_one(fd, data, size);
        else
            close(fd);
        pthread_mutex_lock(&srv.mu);
        srv.data = NULL;
        srv.served = 1;
        pthread_cond_signal(&srv.cv);
        pthread_mutex_unlock(&srv.mu);
    }
    return NULL;
}

static void server_start(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    pthread_t th;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    FUZZ_ASSERT(srv.listen_fd >= 0);
    FUZZ_ASSERT(bind(srv.listen_fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    FUZZ_ASSERT(listen(srv.listen_fd, 4) == 0);
    FUZZ_ASSERT(getsockname(srv.listen_fd, (struct sockaddr *)&a, &len) == 0);
    srv.port = ntohs(a.sin_port);
    FUZZ_ASSERT(pthread_create(&th, NULL, server_main, NULL) == 0);
    pthread_detach(th);
}

/* ---- Step 3: the second reading ---- */

/* Whether word (lower case) occurs in s, in any case. */
static int has_word(const char *s, const char *word)
{
    size_t n = strlen(word);

    for (; *s; s++)
        if (strncasecmp(s, word, n) == 0)
            return 1;
    return 0;
}

struct ref {
    const uint8_t *p;
    size_t n, off;
    long status;
    char *body;
    size_t body_len;
};

/* One line into line as a C string (an embedded NUL ends it there, as it
 * does for http.c's string functions): 0, or -1 without an LF or when the
 * line does not fit in cap. */
static int ref_line(struct ref *r, char *line, size_t cap)
{
    const uint8_t *nl = memchr(r->p + r->off, '\n', r->n - r->off);
    size_t len;

    if (!nl)
        return -1;
    len = (size_t)(nl - (r->p + r->off));
    if (len > 0 && nl[-1] == '\r')
        len--;
    if (len >= cap)
        return -1;
    memcpy(line, r->p + r->off, len);
    line[len] = 0;
    r->off = (size_t)(nl - r->p) + 1;
    return 0;
}

static int ref_body(struct ref *r, long long want)
{
    size_t left = r->n - r->off, take;

    if (want >= 0 && (unsigned long long)want > left)
        return -1;
    take = want < 0 ? left : (size_t)want;
    memcpy(r->body + r->body_len, r->p + r->off, take);
    r->body_len += take;
    r->off += take;
    return 0;
}

static int ref_chunked(struct ref *r)
{
    char line[CHUNK_LINE_MAX];

    for (;;) {
        char *end;
        long long size;

        if (ref_line(r, line, sizeof(line)) != 0)
            return -1;
        size = strtoll(line, &end, 16);
        if (end == line || size < 0)
            return -1;
        if (size == 0)
            break;
        if (ref_body(r, size) != 0 || ref_line(r, line, sizeof(line)) != 0)
            return -1;
    }
    do {
        if (ref_line(r, line, sizeof(line)) != 0)
            return -1;
    } while (line[0]);
    return 0;
}

/* 0 and r->status, r->body for a whole answer; -1 otherwise. */
static int ref_read(struct ref *r)
{
    static char line[LINE_MAX_REF];
    long long length;
    int chunked;

    do {
        size_t total = 0;
        char *end;

        length = -1;
        chunked = 0;
        if (ref_line(r, line, sizeof(line)) != 0 || strncmp(line, "HTTP/1.", 7) != 0 || !line[7])
            return -1;
        r->status = strtol(line + 8, &end, 10);
        if (end == line + 8 || r->status < 100 || r->status > 999)
            return -1;
        for (;;) {
            if (ref_line(r, line, sizeof(line)) != 0)
                return -1;
            total += strlen(line) + 2;
            if (total > HEAD_MAX_REF)
                return -1;
            if (!line[0])
                break;
            if (strncasecmp(line, "Content-Length:", 15) == 0)
                length = strtoll(line + 15, NULL, 10);
            else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 &&
                     has_word(line + 18, "chunked"))
                chunked = 1;
        }
    } while (r->status < 200);
    if (r->status == 204 || r->status == 304)
        return 0;
    return chunked ? ref_chunked(r) : ref_body(r, length);
}

/* ---- Step 1: the client ---- */

struct got {
    char *body;
    size_t len, cap;
};

static int on_body(const char *data, size_t len, long status, void *arg)
{
    struct got *g = arg;

    (void)status;
    FUZZ_ASSERT(g->len + len <= g->cap);
    memcpy(g->body + g->len, data, len);
    g->len += len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const headers[] = {"Accept: application/json"};
    char url[64], err[256];
    struct got got = {malloc(size + 1), 0, size};
    struct ref ref = {data, size, 0, 0, malloc(size + 1), 0};
    struct http_req rq = {.url = url, .method = "GET", .headers = headers, .n_headers = 1,
                          .connect_ms = 10000, .total_ms = 10000, .on_body = on_body,
                          .arg = &got};
    long status = -1;
    int rc, ref_rc;

    FUZZ_ASSERT(got.body && ref.body);
    if (srv.listen_fd < 0)
        server_start();
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/workloads", srv.port);
    pthread_mutex_lock(&srv.mu);
    srv.data = data;
    srv.size = size;
    srv.served = 0;
    pthread_mutex_unlock(&srv.mu);

    rc = http_exchange(&rq, &status, err, sizeof(err));

    pthread_mutex_lock(&srv.mu);
    while (!srv.served)
        pthread_cond_wait(&srv.cv, &srv.mu);
    pthread_mutex_unlock(&srv.mu);

    ref_rc = ref_read(&ref);
    FUZZ_ASSERT(rc >= HTTP_OK && rc <= HTTP_EIO);
    FUZZ_ASSERT(rc != HTTP_ETIMEOUT && rc != HTTP_ECONNECT && rc != HTTP_EURL);
    FUZZ_ASSERT((rc == HTTP_OK) == (ref_rc == 0));
    FUZZ_ASSERT(rc == HTTP_OK || err[0]);
    if (rc == HTTP_OK) {
        FUZZ_ASSERT(status == ref.status);
        FUZZ_ASSERT(got.len == ref.body_len);
        FUZZ_ASSERT(memcmp(got.body, ref.body, got.len) == 0);
    }
    free(got.body);
    free(ref.body);
    return 0;
}
