/*
 * http_req.c: the end-to-end tests' HTTP client (lib.sh's req): one
 * request through the CLI's own HTTP/1.1 client (cli/http.c), the reply's
 * body written out, then a newline and the three-digit status, the way
 * `curl -s -w '\n%{http_code}'` writes them. curl maps about thirty
 * libraries at every start (21 ms a call on a 2-core VM, a quarter of what
 * the shell suites spent); this maps libc alone.
 *
 *   http_req METHOD URL [-H 'Name: value']... [--data-binary BODY]
 *
 * (curl's own flags: lib.sh's http_send hands curl the same arguments
 * when the tests run by hand)
 *
 * One run:
 *   Step 1: read the arguments (a header or URL holding CR or LF is
 *           refused, exit 2: nothing but a well-formed request goes out);
 *   Step 2: http_exchange() sends the request (Host, the headers given,
 *           Content-Length with a body, Connection: close) and hands the
 *           body's pieces to write_piece() as they arrive, no time limit
 *           (as curl has none);
 *   Step 3: write "\n" and the status: 000 when no status line came.
 *
 * Exit status, as curl's where the tests can tell: 0 when the reply came
 * whole, 7 when no connection was made, 56 when the reply broke off or
 * was not HTTP (its status, if one came, is still written).
 */
#include <stdio.h>
#include <string.h>

#include "http.h"

#define EXIT_USAGE 2
#define EXIT_CONNECT 7
#define EXIT_RECV 56
#define MAX_HEADERS 32
#define CONNECT_MS 60000

static int has_crlf(const char *s)
{
    return strpbrk(s, "\r\n") != NULL;
}

/* Step 1. */
static int parse_args(struct http_req *rq, const char **headers, int argc, char **argv)
{
    int i;
    if (argc < 3 || !*argv[1] || has_crlf(argv[1]) || has_crlf(argv[2]))
        return -1;
    rq->method = argv[1];
    rq->url = argv[2];
    rq->headers = headers;
    for (i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-H") == 0) {
            if (rq->n_headers == MAX_HEADERS || has_crlf(argv[i + 1]))
                return -1;
            headers[rq->n_headers++] = argv[i + 1];
        } else if (strcmp(argv[i], "--data-binary") == 0) {
            rq->body = argv[i + 1];
            rq->len = strlen(argv[i + 1]);
            rq->has_body = 1;
        } else {
            return -1;
        }
    }
    return i == argc ? 0 : -1;
}

static int write_piece(const char *data, size_t len, long status, void *arg)
{
    (void)status;
    (void)arg;
    return fwrite(data, 1, len, stdout) == len ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *headers[MAX_HEADERS];
    struct http_req rq = {0};
    char err[256];
    long status = 0;
    int rc;

    if (parse_args(&rq, headers, argc, argv) != 0) {
        fprintf(stderr, "usage: http_req METHOD http://HOST[:PORT]/PATH "
                        "[-H 'Name: value']... [--data-binary BODY] (no CR or LF in any)\n");
        return EXIT_USAGE;
    }
    rq.connect_ms = CONNECT_MS;
    rq.on_body = write_piece;
    rc = http_exchange(&rq, &status, err, sizeof err);
    printf("\n%03ld", status > 0 && status < 1000 ? status : 0);
    if (fflush(stdout) != 0)
        return EXIT_RECV;
    switch (rc) {
    case HTTP_OK:
        return 0;
    case HTTP_EURL:
        fprintf(stderr, "http_req: %s\n", err);
        return EXIT_USAGE;
    case HTTP_ERESOLVE:
    case HTTP_ECONNECT:
    case HTTP_ECONNECT_TIMEOUT:
        return EXIT_CONNECT;
    default:
        return EXIT_RECV;
    }
}
