/*
 * client.c: HTTP to allotd, the bearer token's life (refresh before it
 * expires, and once more when the server refuses it), and the messages
 * for everything that can go wrong on the way.
 *
 * A call's path (call()):
 *   Step 1: a token that expires within REFRESH_MARGIN_S is refreshed
 *           first (grant_type=refresh_token on /api/v2/token), and the new
 *           pair is saved;
 *   Step 2: the exchange, bounded by the connect and total timeouts: over
 *           plain TCP for an http:// server (http.c), through libcurl for
 *           https:// or when the environment names a proxy;
 *   Step 3: a 401 refreshes once and repeats the exchange; a second 401 is
 *           "not logged in".
 * The config's url may name several servers (replicas, servers.h): an
 * exchange starts at the one that answered last, and moves to the next
 * when one cannot be reached (no connection) or answers 503.
 *
 * libcurl is opened with dlopen() at the first exchange that needs it:
 * loading it and the TLS, Kerberos and LDAP libraries it links costs
 * about 30 ms of CPU, six times what the rest of a submission costs the
 * CLI, and an allot command is one short process.
 *
 * Invariants:
 *   1. No exchange can outlast ALLOT_CONNECT_TIMEOUT + ALLOT_TIMEOUT,
 *      except a followed log stream, which has only the connect timeout.
 *   2. Bodies are kept up to BODY_MAX bytes; a larger answer is an error,
 *      never a truncated document.
 *   3. Tokens never appear in a message.
 *   4. curl_global_init() and curl_global_cleanup() run at most once each,
 *      at the first https exchange and in client_close().
 *   5. Both transports send the same headers and give the same messages.
 */
#include "client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base64.h"
#include "cli.h"
#include "http.h"
#include "servers.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "unknown"
#endif

#define BODY_MAX ((size_t)64 << 20)
#define REFRESH_MARGIN_S 10
#define TOKEN_PATH "/api/v2/token"
#define FORM_TYPE "application/x-www-form-urlencoded"
#define JSON_TYPE "application/json"
#define CURL_LIB "libcurl.so.4"
#define MAX_HEADERS 6

/* The libcurl functions client.c calls, from dlopen(CURL_LIB). */
struct curl_fns {
    void *lib;
    CURLcode (*global_init)(long flags);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *curl);
    void (*easy_reset)(CURL *curl);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL *curl);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
};

struct client {
    struct servers servers;    /* from cfg.url at the first exchange */
    CURL *curl;                /* opened at the first exchange through libcurl */
    struct curl_fns cu;
    struct cli_config cfg;
    long connect_ms;
    long total_ms;
    int refreshed;             /* the tokens were refreshed in this run */
    int curl_started;          /* curl_global_init() succeeded */
    char errbuf[CURL_ERROR_SIZE];
};

struct request {
    const char *method;
    const char *path;          /* with its query, already escaped */
    const char *ctype;         /* of the body, or NULL */
    const char *body;
    size_t len;
    int auth;                  /* send the bearer token */
    int follow;                /* a stream with no total timeout */
    FILE *stream;              /* where a 2xx body goes, or NULL */
};

/* Where the body goes as it arrives. */
struct sink {
    struct reply *rep;
    FILE *stream;
    struct client *c;
    int too_big;
};

void reply_clear(struct reply *rep)
{
    free(rep->body);
    memset(rep, 0, sizeof(*rep));
}

struct cli_config *client_config(struct client *c)
{
    return &c->cfg;
}

/* ---- the exchange ---- */

/* A piece of the body: a 2xx answer of a stream goes to the stream, any
 * other is kept. 0 to go on, -1 to stop. */
static int sink_take(struct sink *s, const char *data, size_t len, long code)
{
    char *p;

    if (s->stream && code >= 200 && code < 300) {
        if (fwrite(data, 1, len, s->stream) != len)
            return -1;
        fflush(s->stream);
        return 0;
    }
    if (s->rep->len + len > BODY_MAX) {
        s->too_big = 1;
        return -1;
    }
    p = realloc(s->rep->body, s->rep->len + len + 1);
    if (!p)
        return -1;
    memcpy(p + s->rep->len, data, len);
    s->rep->len += len;
    p[s->rep->len] = 0;
    s->rep->body = p;
    return 0;
}

static int plain_body(const char *data, size_t len, long status, void *arg)
{
    return sink_take(arg, data, len, status);
}

static size_t curl_body(char *data, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    long code = 0;

    s->c->cu.easy_getinfo(s->c->curl, CURLINFO_RESPONSE_CODE, &code);
    return sink_take(s, data, size * n, code) == 0 ? size * n : 0;
}

static const char *server(const struct client *c)
{
    return c->cfg.url ? c->cfg.url : "the server";
}

/* The message for a failed exchange with server(c), by what failed (enum
 * http_rc). */
static int transport_error(struct client *c, int what, const char *why, const struct sink *s)
{
    switch (what) {
    case HTTP_ECONNECT:
        return cli_fail("cannot connect to %s: %s: is allotd running there? "
                        "(allot login --url URL points allot at another server)", server(c), why);
    case HTTP_ERESOLVE:
        return cli_fail("cannot find the host of %s: %s: check the address "
                        "(allot login --url URL)", server(c), why);
    case HTTP_ECONNECT_TIMEOUT:
        return cli_fail("no connection to %s within %.1f s: is the server up and "
                        "reachable? (ALLOT_CONNECT_TIMEOUT sets the limit)",
                        server(c), (double)c->connect_ms / 1000.0);
    case HTTP_ETIMEOUT:
        return cli_fail("%s did not answer within %.1f s: the server is busy or stuck; "
                        "try again, or raise ALLOT_TIMEOUT", server(c),
                        (double)c->total_ms / 1000.0);
    case HTTP_EWRITE:
        if (s->too_big)
            return cli_fail("the answer of %s is larger than %zu MiB", server(c), BODY_MAX >> 20);
        return cli_fail("cannot write the answer of %s: %s", server(c), why);
    default:
        return cli_fail("cannot talk to %s: %s", server(c), why);
    }
}

/* The request's headers, "Name: value" each (malloc'd; the token is wiped
 * when they are freed). */
static int headers(const struct client *c, const struct request *rq, char **h, int *n)
{
    *n = 0;
    h[(*n)++] = cli_strf("Accept: %s", JSON_TYPE);
    h[(*n)++] = cli_strf("User-Agent: allot/%s", ALLOT_VERSION);
    if (rq->ctype)
        h[(*n)++] = cli_strf("Content-Type: %s", rq->ctype);
    if (rq->auth)
        h[(*n)++] = cli_strf("Authorization: Bearer %s", c->cfg.access_token);
    for (int i = 0; i < *n; i++)
        if (!h[i])
            return -1;
    return 0;
}

static void headers_free(char **h, int n)
{
    for (int i = 0; i < n; i++)
        if (h[i]) {
            memset(h[i], 0, strlen(h[i])); /* may hold the token */
            free(h[i]);
        }
}

static int has_body(const struct request *rq)
{
    return strcmp(rq->method, "GET") != 0 && (rq->body || strcmp(rq->method, "POST") == 0);
}

/* Both transports return HTTP_OK when an answer came, an HTTP_E* code
 * with the reason in c->errbuf, or TRANSPORT_SAID (the reason printed). */
#define TRANSPORT_SAID (-1)

static int plain_exchange(struct client *c, const struct request *rq, struct sink *s,
                          const char *url, char **h, int n_h)
{
    struct http_req hr;

    memset(&hr, 0, sizeof(hr));
    hr.url = url;
    hr.method = rq->method;
    hr.headers = (const char *const *)h;
    hr.n_headers = n_h;
    hr.body = rq->body ? rq->body : "";
    hr.len = rq->body ? rq->len : 0;
    hr.has_body = has_body(rq);
    hr.connect_ms = c->connect_ms;
    hr.total_ms = rq->follow ? 0 : c->total_ms;
    hr.on_body = plain_body;
    hr.arg = s;
    return http_exchange(&hr, &s->rep->status, c->errbuf, sizeof(c->errbuf));
}

/* Opens libcurl and one handle; 0, or -1 with the reason printed. */
static int curl_open(struct client *c)
{
    static const char *const names[] = {
        "curl_global_init", "curl_global_cleanup", "curl_easy_init", "curl_easy_cleanup",
        "curl_easy_reset", "curl_easy_setopt", "curl_easy_perform", "curl_easy_getinfo",
        "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all"};
    void **slots[] = {
        (void **)&c->cu.global_init, (void **)&c->cu.global_cleanup, (void **)&c->cu.easy_init,
        (void **)&c->cu.easy_cleanup, (void **)&c->cu.easy_reset, (void **)&c->cu.easy_setopt,
        (void **)&c->cu.easy_perform, (void **)&c->cu.easy_getinfo,
        (void **)&c->cu.easy_strerror, (void **)&c->cu.slist_append,
        (void **)&c->cu.slist_free_all};
    size_t i;

    if (c->curl)
        return 0;
    c->cu.lib = dlopen(CURL_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!c->cu.lib) {
        cli_fail("cannot talk to %s: this URL needs %s, which cannot be loaded (%s)", server(c),
                 CURL_LIB, dlerror());
        return -1;
    }
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *slots[i] = dlsym(c->cu.lib, names[i]);
        if (!*slots[i]) {
            cli_fail("cannot talk to %s: %s lacks %s", server(c), CURL_LIB, names[i]);
            return -1;
        }
    }
    c->curl_started = c->cu.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    c->curl = c->curl_started ? c->cu.easy_init() : NULL;
    if (!c->curl) {
        cli_fail("cannot start libcurl");
        return -1;
    }
    return 0;
}

static int curl_what(struct client *c, CURLcode rc)
{
    curl_off_t connected = 0;

    switch (rc) {
    case CURLE_COULDNT_CONNECT: return HTTP_ECONNECT;
    case CURLE_COULDNT_RESOLVE_HOST: return HTTP_ERESOLVE;
    case CURLE_WRITE_ERROR: return HTTP_EWRITE;
    case CURLE_OPERATION_TIMEDOUT:
        c->cu.easy_getinfo(c->curl, CURLINFO_CONNECT_TIME_T, &connected);
        return connected == 0 ? HTTP_ECONNECT_TIMEOUT : HTTP_ETIMEOUT;
    default: return HTTP_EIO;
    }
}

static int curl_exchange(struct client *c, const struct request *rq, struct sink *s,
                         const char *url, char **h, int n_h)
{
    const struct curl_fns *cu = &c->cu;
    struct curl_slist *list = NULL, *l;
    CURLcode rc;
    int i, ret = TRANSPORT_SAID;

    if (curl_open(c) != 0)
        return TRANSPORT_SAID;
    for (i = 0; i < n_h; i++) {
        l = cu->slist_append(list, h[i]);
        if (!l) {
            cli_fail("out of memory");
            goto out;
        }
        list = l;
    }
    l = cu->slist_append(list, "Expect:"); /* no 100-continue round trip */
    if (!l) {
        cli_fail("out of memory");
        goto out;
    }
    list = l;
    cu->easy_reset(c->curl);
    c->errbuf[0] = 0;
    cu->easy_setopt(c->curl, CURLOPT_URL, url);
    cu->easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    cu->easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    cu->easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, rq->follow ? 0L : c->total_ms);
    cu->easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L);
    cu->easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
    cu->easy_setopt(c->curl, CURLOPT_HTTPHEADER, list);
    cu->easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, curl_body);
    cu->easy_setopt(c->curl, CURLOPT_WRITEDATA, s);
    if (strcmp(rq->method, "GET") == 0)
        cu->easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    else if (strcmp(rq->method, "POST") == 0)
        cu->easy_setopt(c->curl, CURLOPT_POST, 1L);
    else
        cu->easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, rq->method);
    if (has_body(rq)) {
        cu->easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)rq->len);
        cu->easy_setopt(c->curl, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
    }
    rc = cu->easy_perform(c->curl);
    if (rc != CURLE_OK) {
        if (!c->errbuf[0])
            snprintf(c->errbuf, sizeof(c->errbuf), "%s", cu->easy_strerror(rc));
        ret = curl_what(c, rc);
        goto out;
    }
    cu->easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &s->rep->status);
    ret = HTTP_OK;
out:
    cu->easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    cu->slist_free_all(list);
    return ret;
}

/* An http:// URL with no proxy named in the environment (libcurl reads
 * http_proxy, all_proxy and ALL_PROXY, and no_proxy against them) goes
 * over plain TCP. */
static int plain_url(const char *url)
{
    static const char *const proxies[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
    size_t i;

    if (strncmp(url, "http://", 7) != 0)
        return 0;
    for (i = 0; i < sizeof(proxies) / sizeof(proxies[0]); i++) {
        const char *v = getenv(proxies[i]);
        if (v && v[0])
            return 0;
    }
    return 1;
}

/* Whether a failed exchange never reached its server (the next may take it). */
static int unreached(int what)
{
    return what == HTTP_ECONNECT || what == HTTP_ERESOLVE || what == HTTP_ECONNECT_TIMEOUT;
}

/* One exchange with the server at index i: an enum http_rc or TRANSPORT_SAID. */
static int exchange_with(struct client *c, int i, const struct request *rq, struct sink *s,
                         char **h, int n_h)
{
    char *url = cli_strf("%s%s", c->servers.url[i], rq->path);
    int what;

    reply_clear(s->rep);
    s->too_big = 0;
    if (!url) {
        cli_fail("out of memory");
        return TRANSPORT_SAID;
    }
    what = plain_url(url) ? plain_exchange(c, rq, s, url, h, n_h)
                          : curl_exchange(c, rq, s, url, h, n_h);
    free(url);
    return what;
}

/* One exchange. CLI_OK when an answer came, whatever its status: from the
 * server that answered last, or the next ones in turn while one cannot be
 * reached or answers 503. */
static int exchange(struct client *c, const struct request *rq, struct reply *rep)
{
    struct sink s = {rep, rq->stream, c, 0};
    char *h[MAX_HEADERS] = {NULL};
    char why[256];
    int n_h = 0, ret = CLI_FAIL, k, i = 0, what = HTTP_ECONNECT, cur = c->servers.cur;

    reply_clear(rep);
    if (servers_parse(c->cfg.url ? c->cfg.url : "", &c->servers, why, sizeof(why)) != 0) {
        cli_fail("the url in %s %s (allot login --url URL[,URL...])", c->cfg.path, why);
        goto out;
    }
    c->servers.cur = cur < c->servers.n ? cur : 0; /* the url may change (login) */
    if (headers(c, rq, h, &n_h) != 0) {
        cli_fail("out of memory");
        goto out;
    }
    for (k = 0; k < c->servers.n; k++) {
        i = (c->servers.cur + k) % c->servers.n;
        what = exchange_with(c, i, rq, &s, h, n_h);
        if (what == HTTP_OK ? rep->status != 503 : !unreached(what))
            break;
    }
    if (what == HTTP_OK) {
        c->servers.cur = i;
        ret = CLI_OK;
    } else if (what != TRANSPORT_SAID) {
        ret = transport_error(c, what, c->errbuf, &s);
    }
out:
    headers_free(h, n_h);
    return ret;
}

/* ---- tokens ---- */

static int not_logged_in(const struct client *c)
{
    return cli_fail("not logged in: run allot login --url %s --user USER --password-stdin",
                    c->cfg.url ? c->cfg.url : "http://HOST:8080");
}

/* Keeps the tokens of a 200 answer of the token route. */
static int take_tokens(struct client *c, const struct reply *rep)
{
    json_t *o = json_loadb(rep->body ? rep->body : "", rep->len, 0, NULL);
    json_t *at = json_object_get(o, "access_token"), *rt = json_object_get(o, "refresh_token");
    json_t *ttl = json_object_get(o, "expires_in");
    int rc = CLI_OK;

    if (!json_is_string(at) || (rt && !json_is_string(rt)) || !json_is_integer(ttl))
        rc = cli_fail("%s answered the token request with something that is not a token",
                      server(c));
    else if (config_set(&c->cfg.access_token, json_string_value(at)) ||
             config_set(&c->cfg.refresh_token, rt ? json_string_value(rt) : NULL))
        rc = cli_fail("out of memory");
    else
        c->cfg.expires_at = (long long)time(NULL) + (long long)json_integer_value(ttl);
    json_decref(o);
    return rc;
}

static int token_exchange(struct client *c, const char *form, struct reply *rep)
{
    struct request rq = {"POST", TOKEN_PATH, FORM_TYPE, form, strlen(form), 0, 0, NULL};

    return exchange(c, &rq, rep);
}

/* Trades the refresh token for a new pair and saves it. */
static int refresh(struct client *c)
{
    struct reply rep = {0};
    char *tok = NULL, *form = NULL;
    int rc = CLI_FAIL;

    c->refreshed = 1;
    if (!c->cfg.refresh_token)
        return not_logged_in(c);
    tok = client_escape(c->cfg.refresh_token);
    form = tok ? cli_strf("grant_type=refresh_token&refresh_token=%s", tok) : NULL;
    if (!form) {
        cli_fail("out of memory");
        goto out;
    }
    rc = token_exchange(c, form, &rep);
    if (rc != CLI_OK)
        goto out;
    if (rep.status != 200) {
        rc = cli_fail("your session has expired: run allot login --url %s%s%s", server(c),
                      !c->cfg.user ? "" : c->cfg.service_account ? " --client-id " : " --user ",
                      c->cfg.user ? c->cfg.user : "");
        goto out;
    }
    rc = take_tokens(c, &rep);
    if (rc == CLI_OK)
        rc = config_save(&c->cfg);
out:
    reply_clear(&rep);
    free(form);
    free(tok);
    return rc;
}

static int ensure_fresh(struct client *c)
{
    if (!c->cfg.url || !c->cfg.access_token)
        return not_logged_in(c);
    if (!c->refreshed && c->cfg.expires_at &&
        (long long)time(NULL) + REFRESH_MARGIN_S >= c->cfg.expires_at)
        return refresh(c);
    return CLI_OK;
}

/* Steps 1 to 3 of the file's comment. */
static int call(struct client *c, const struct request *rq, struct reply *rep)
{
    int rc = rq->auth ? ensure_fresh(c) : CLI_OK;

    if (rc != CLI_OK)
        return rc;
    rc = exchange(c, rq, rep);
    if (rc != CLI_OK || rep->status != 401 || !rq->auth || c->refreshed)
        return rc;
    rc = refresh(c);
    if (rc != CLI_OK)
        return rc;
    return exchange(c, rq, rep);
}

int client_grant(struct client *c, const char *form)
{
    struct reply rep = {0};
    json_t *o = NULL;
    const char *why;
    int rc = token_exchange(c, form, &rep);

    if (rc != CLI_OK)
        goto out;
    if (rep.status == 200) {
        rc = take_tokens(c, &rep);
        goto out;
    }
    o = json_loadb(rep.body ? rep.body : "", rep.len, 0, NULL);
    why = json_string_value(json_object_get(o, "error_description"));
    if (rep.status == 400 || rep.status == 401)
        rc = cli_fail("login failed: %s", why ? why : "the server refused the credentials");
    else
        rc = client_server_error(c, &rep);
out:
    json_decref(o);
    reply_clear(&rep);
    return rc;
}

/* ---- errors ---- */

static const char *status_text(long status)
{
    switch (status) {
    case 400: return "Bad request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not found";
    case 405: return "Method not allowed";
    case 409: return "Conflict";
    case 413: return "Payload too large";
    case 429: return "Too many requests";
    case 503: return "Service unavailable";
    default: return status >= 500 ? "Server error" : "Error";
    }
}

static void next_step(long status)
{
    if (status == 403)
        fprintf(stderr, "allot: an access rule is missing: ask an administrator "
                        "(allot whoami shows your roles)\n");
    else if (status == 429)
        fprintf(stderr, "allot: the server limits how fast one client may call it: "
                        "wait a moment and try again\n");
    else if (status >= 500)
        fprintf(stderr, "allot: the server failed: its log says why\n");
}

int client_server_error(struct client *c, const struct reply *rep)
{
    json_t *o = json_loadb(rep->body ? rep->body : "", rep->len, 0, NULL);
    const char *details = json_string_value(json_object_get(o, "details"));
    const char *message = json_string_value(json_object_get(o, "message"));
    const char *desc = json_string_value(json_object_get(o, "error_description"));
    const char *text = details && details[0] ? details : message && message[0] ? message : desc;

    if (rep->status == 401) {
        fprintf(stderr, "allot: not logged in: the server refused the token%s%s%s: "
                        "run allot login --url %s\n",
                text ? " (" : "", text ? text : "", text ? ")" : "", server(c));
    } else if (text) {
        fprintf(stderr, "allot: %s (%ld %s)\n", text, rep->status,
                message && message != text ? message : status_text(rep->status));
    } else {
        fprintf(stderr, "allot: %s answered %ld %s\n", server(c), rep->status,
                status_text(rep->status));
    }
    next_step(rep->status);
    json_decref(o);
    return CLI_FAIL;
}

/* ---- JSON calls ---- */

static int parse_answer(struct client *c, const struct reply *rep, json_t **out)
{
    json_error_t err;

    *out = NULL;
    if (rep->len == 0)
        return CLI_OK;
    *out = json_loadb(rep->body, rep->len, 0, &err);
    if (!*out)
        return cli_fail("%s answered with malformed JSON: %s", server(c), err.text);
    return CLI_OK;
}

int client_json(struct client *c, const char *method, const char *path, json_t *body,
                json_t **out)
{
    struct request rq = {method, path, NULL, NULL, 0, 1, 0, NULL};
    struct reply rep = {0};
    char *text = NULL;
    int rc;

    *out = NULL;
    if (body) {
        text = json_dumps(body, JSON_COMPACT);
        if (!text)
            return cli_fail("out of memory");
        rq.ctype = JSON_TYPE;
        rq.body = text;
        rq.len = strlen(text);
    }
    rc = call(c, &rq, &rep);
    if (rc == CLI_OK && (rep.status < 200 || rep.status > 299))
        rc = client_server_error(c, &rep);
    else if (rc == CLI_OK)
        rc = parse_answer(c, &rep, out);
    reply_clear(&rep);
    free(text);
    return rc;
}

/* Appends page[key] to all; *next is the next offset, or -1. */
static int take_page(struct client *c, json_t *page, const char *key, json_t *all, long *next)
{
    json_t *items = json_object_get(page, key), *n = json_object_get(page, "next");

    if (!json_is_array(items))
        return cli_fail("%s answered a list without '%s'", server(c), key);
    json_array_extend(all, items);
    *next = json_is_integer(n) ? (long)json_integer_value(n) : -1;
    return CLI_OK;
}

int client_list_all(struct client *c, const char *path, const char *key, json_t **out)
{
    json_t *all = json_array(), *page = NULL;
    long offset = 0, next = -1;
    char *p;
    int rc = CLI_OK;

    *out = NULL;
    while (all && rc == CLI_OK) {
        p = cli_strf("%s%soffset=%ld&limit=500", path, strchr(path, '?') ? "&" : "?", offset);
        if (!p) {
            rc = cli_fail("out of memory");
            break;
        }
        rc = client_json(c, "GET", p, NULL, &page);
        free(p);
        if (rc == CLI_OK)
            rc = take_page(c, page, key, all, &next);
        json_decref(page);
        page = NULL;
        if (next <= offset)
            break;
        offset = next;
    }
    if (!all)
        rc = cli_fail("out of memory");
    if (rc == CLI_OK)
        *out = all;
    else
        json_decref(all);
    return rc;
}

int client_stream(struct client *c, const char *path, int follow, FILE *to, struct reply *rep)
{
    struct request rq = {"GET", path, NULL, NULL, 0, 1, follow, to};

    return call(c, &rq, rep);
}

/* ---- opening and closing ---- */

static int env_ms(const char *name, double def_s, long *ms)
{
    const char *v = getenv(name);
    double s = def_s;

    if (v && v[0] && cli_parse_real(v, 0.001, 86400, &s) != 0) {
        fprintf(stderr, "allot: %s must be a number of seconds, such as %g\n", name, def_s);
        return CLI_USAGE;
    }
    *ms = (long)(s * 1000.0 + 0.5);
    return CLI_OK;
}

int client_open(struct client **out, int need)
{
    struct client *c = calloc(1, sizeof(*c));
    int rc;

    *out = NULL;
    if (!c)
        return cli_fail("out of memory");
    rc = env_ms("ALLOT_CONNECT_TIMEOUT", 5, &c->connect_ms);
    if (rc == CLI_OK)
        rc = env_ms("ALLOT_TIMEOUT", 30, &c->total_ms);
    if (rc == CLI_OK)
        rc = config_load(&c->cfg);
    if (rc == CLI_OK && need == CLIENT_LOGGED_IN && (!c->cfg.url || !c->cfg.access_token))
        rc = not_logged_in(c);
    if (rc == CLI_OK)
        *out = c;
    else
        client_close(c);
    return rc;
}

void client_close(struct client *c)
{
    if (!c)
        return;
    if (c->curl)
        c->cu.easy_cleanup(c->curl);
    if (c->curl_started)
        c->cu.global_cleanup();
    if (c->cu.lib)
        dlclose(c->cu.lib);
    config_clear(&c->cfg);
    free(c);
}

/* ---- small encoders ---- */

char *client_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s), i, o = 0;
    char *e = malloc(n * 3 + 1);

    if (!e)
        return NULL;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            e[o++] = (char)ch;
        } else {
            e[o++] = '%';
            e[o++] = hex[ch >> 4];
            e[o++] = hex[ch & 15];
        }
    }
    e[o] = 0;
    return e;
}

json_t *client_token_claims(const char *token)
{
    const char *p = token ? strchr(token, '.') : NULL, *end;
    unsigned char *text;
    json_t *claims = NULL;
    long n;

    if (!p)
        return NULL;
    end = strchr(++p, '.');
    if (!end)
        return NULL;
    text = malloc((size_t)(end - p) + 1);
    if (!text)
        return NULL;
    n = base64_decode(p, (size_t)(end - p), BASE64_URL, text, (size_t)(end - p));
    if (n >= 0)
        claims = json_loadb((const char *)text, (size_t)n, 0, NULL);
    free(text);
    return claims;
}
