/*
 * http.h: one HTTP/1.1 exchange over plain TCP, for http:// URLs.
 *
 * allot runs one short command per process, so what a process costs to
 * start is most of what a command costs: this client has no dependency
 * beyond libc (libcurl, with the TLS and authentication libraries it
 * loads, is opened only for https:// URLs; client.c).
 */
#ifndef ALLOT_HTTP_H
#define ALLOT_HTTP_H
#include <stddef.h>

/* Takes each piece of the answer's body as it arrives; returns 0 to go
 * on, non-zero to stop the exchange (HTTP_EWRITE). status is the
 * answer's. */
typedef int (*http_body_fn)(const char *data, size_t len, long status, void *arg);

struct http_req {
    const char *url;               /* http://host[:port][/path][?query] */
    const char *method;            /* GET, POST, PUT, PATCH, DELETE */
    const char *const *headers;    /* "Name: value" lines, without CRLF */
    int n_headers;
    const char *body;              /* sent with its Content-Length when has_body */
    size_t len;
    int has_body;
    long connect_ms;               /* connecting, for each address tried */
    long total_ms;                 /* the whole exchange; 0: no limit */
    http_body_fn on_body;
    void *arg;
};

enum http_rc {
    HTTP_OK = 0,
    HTTP_EURL,             /* not an http:// URL this client can read */
    HTTP_ERESOLVE,         /* the host has no address */
    HTTP_ECONNECT,         /* every address refused or failed */
    HTTP_ECONNECT_TIMEOUT, /* no connection within connect_ms */
    HTTP_ETIMEOUT,         /* connected, but no whole answer within total_ms */
    HTTP_EWRITE,           /* on_body asked to stop */
    HTTP_EPROTO,           /* the answer is not HTTP/1.x */
    HTTP_EIO               /* the connection failed in the middle, or no memory */
};

/* Sends the request and reads the whole answer (its body through
 * on_body). *status is the answer's status once one was read. err gets a
 * sentence for the codes other than HTTP_OK. */
int http_exchange(const struct http_req *rq, long *status, char *err, size_t err_len);

#endif
