/*
 * client.c: allot-agent's HTTP client for allotd (libcurl, one easy
 * handle so the connection is kept alive between requests), over one
 * server or several replicas (servers.h): a request that cannot connect,
 * or is answered 503, goes to the next URL; the one that answers is kept.
 *
 * Invariants:
 *   1. Every request is bounded: connect and total timeouts, a cap on the
 *      reply's size; libcurl never raises signals (CURLOPT_NOSIGNAL).
 *   2. The token goes only in the Authorization header, and is never
 *      printed.
 *   3. A request gives up once SIGTERM or SIGINT is pending (the agent
 *      blocks them and takes them between requests), within about a
 *      second, libcurl's idle progress period: a heartbeat that waits for
 *      work does not hold a stop back for its whole wait.
 */
#include "agent.h"
#include "arrays.h"
#include "servers.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_MAX (16 * 1024 * 1024)
#define CONNECT_MAX_MS 3000

struct client {
    CURL *h;
    struct servers servers;
    char *auth;                  /* "Authorization: Bearer ..." */
    char *buf;                   /* the reply being read */
    size_t len, cap;
    int too_big;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct client *c = arg;
    size_t k = size * n;

    if (c->len + k > REPLY_MAX) {
        c->too_big = 1;
        return 0;
    }
    return text_append(&c->buf, &c->len, &c->cap, 4096, p, k) == 0 ? k : 0;
}

/* Invariant 3: a nonzero return aborts the transfer. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    sigset_t pending;

    (void)arg;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return sigpending(&pending) == 0 &&
           (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

struct client *client_new(const char *server, const char *token, int timeout_ms)
{
    struct client *c = calloc(1, sizeof(*c));
    size_t n = strlen(token) + 32;
    char why[256];

    if (!c)
        return NULL;
    c->h = curl_easy_init();
    c->auth = malloc(n);
    if (!c->h || !c->auth || servers_parse(server, &c->servers, why, sizeof(why)) != 0) {
        client_free(c);
        return NULL;
    }
    snprintf(c->auth, n, "Authorization: Bearer %s", token);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
    client_set_timeout(c, timeout_ms);
    return c;
}

void client_set_timeout(struct client *c, int timeout_ms)
{
    curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(timeout_ms < CONNECT_MAX_MS ? timeout_ms : CONNECT_MAX_MS));
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
}

void client_free(struct client *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    if (c->auth)
        memset(c->auth, 0, strlen(c->auth));
    free(c->auth);
    free(c->buf);
    free(c);
}

/* The request's headers; on failure nothing is left allocated. */
static int headers(struct curl_slist **hs, const char *auth, const char *ctype)
{
    const char *lines[] = {auth, ctype, "Expect:" /* no 100-continue round trip */};
    struct curl_slist *l = NULL, *next;
    size_t i;

    for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        next = curl_slist_append(l, lines[i]);
        if (!next) {
            curl_slist_free_all(l);
            return -1;
        }
        l = next;
    }
    *hs = l;
    return 0;
}

const char *client_server(const struct client *c)
{
    return c->servers.url[c->servers.cur];
}

/* Whether a failed exchange never reached a server (the next may take it). */
static int unreached(struct client *c, CURLcode cc)
{
    curl_off_t connected = 0;

    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST)
        return 1;
    if (cc != CURLE_OPERATION_TIMEDOUT)
        return 0;
    curl_easy_getinfo(c->h, CURLINFO_CONNECT_TIME_T, &connected);
    return connected == 0;
}

/* One POST to the server at index i: the curl code, *status once answered. */
static CURLcode post_to(struct client *c, int i, const char *path, struct curl_slist *hs,
                        const char *data, size_t len, long *status)
{
    char url[2048];
    CURLcode cc;

    c->len = 0;
    c->too_big = 0;
    if (snprintf(url, sizeof(url), "%s%s", c->servers.url[i], path) >= (int)sizeof(url))
        return CURLE_URL_MALFORMAT;
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, data);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    cc = curl_easy_perform(c->h);
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, NULL);
    if (cc == CURLE_OK)
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
    return cc;
}

/* One POST; 0 when a reply came (any status): from the current server,
 * or the next ones in turn while one is unreachable or answers 503; -2
 * when it gave up for a stop signal (Invariant 3). */
static int post(struct client *c, const char *path, const char *type, const char *data,
                size_t len, json_t **out, long *status)
{
    char ctype[64];
    struct curl_slist *hs = NULL;
    CURLcode cc = CURLE_COULDNT_CONNECT;
    int k, i = c->servers.cur;

    *out = NULL;
    *status = 0;
    snprintf(ctype, sizeof(ctype), "Content-Type: %s", type);
    if (headers(&hs, c->auth, ctype) != 0)
        return -1;
    for (k = 0; k < c->servers.n; k++) {
        i = (c->servers.cur + k) % c->servers.n;
        *status = 0;
        cc = post_to(c, i, path, hs, data, len, status);
        if (cc == CURLE_OK ? *status != 503 : !unreached(c, cc))
            break;
    }
    curl_slist_free_all(hs);
    if (cc == CURLE_ABORTED_BY_CALLBACK)
        return -2;
    if (cc != CURLE_OK || c->too_big)
        return -1;
    c->servers.cur = i;
    if (c->len > 0)
        *out = json_loadb(c->buf, c->len, 0, NULL);
    return 0;
}

int client_post_json(struct client *c, const char *path, json_t *body, json_t **out,
                     long *status)
{
    char *text = json_dumps(body, JSON_COMPACT);
    int rc;

    if (!text) {
        *out = NULL;
        *status = 0;
        return -1;
    }
    rc = post(c, path, "application/json", text, strlen(text), out, status);
    free(text);
    return rc;
}

int client_post_bytes(struct client *c, const char *path, const char *data, size_t len,
                      json_t **out, long *status)
{
    return post(c, path, "application/octet-stream", len ? data : "", len, out, status);
}
