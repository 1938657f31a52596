/*
 * client.c: HTTP to allotd with libcurl, the bearer token's life
 * (refresh before it expires, and once more when the server refuses it),
 * and the messages for everything that can go wrong on the way.
 *
 * A call's path (call()):
 *   Step 1: a token that expires within REFRESH_MARGIN_S is refreshed
 *           first (grant_type=refresh_token on /api/v2/token), and the new
 *           pair is saved;
 *   Step 2: the exchange, bounded by the connect and total timeouts;
 *   Step 3: a 401 refreshes once and repeats the exchange; a second 401 is
 *           "not logged in".
 *
 * Invariants:
 *   1. No exchange can outlast ALLOT_CONNECT_TIMEOUT + ALLOT_TIMEOUT,
 *      except a followed log stream, which has only the connect timeout.
 *   2. Bodies are kept up to BODY_MAX bytes; a larger answer is an error,
 *      never a truncated document.
 *   3. Tokens never appear in a message.
 *   4. curl_global_init() and curl_global_cleanup() run once each, in
 *      client_open() and client_close().
 */
#include "client.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "unknown"
#endif

#define BODY_MAX ((size_t)64 << 20)
#define REFRESH_MARGIN_S 10
#define TOKEN_PATH "/api/v2/token"
#define FORM_TYPE "application/x-www-form-urlencoded"
#define JSON_TYPE "application/json"

struct client {
    CURL *curl;
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

/* Where libcurl's write callback puts the body. */
struct sink {
    struct reply *rep;
    FILE *stream;
    CURL *curl;
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

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    size_t len = size * n;
    long code = 0;
    char *p;

    if (s->stream) {
        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200 && code < 300) {
            if (fwrite(data, 1, len, s->stream) != len)
                return 0;
            fflush(s->stream);
            return len;
        }
    }
    if (s->rep->len + len > BODY_MAX) {
        s->too_big = 1;
        return 0;
    }
    p = realloc(s->rep->body, s->rep->len + len + 1);
    if (!p)
        return 0;
    memcpy(p + s->rep->len, data, len);
    s->rep->len += len;
    p[s->rep->len] = 0;
    s->rep->body = p;
    return len;
}

static const char *server(const struct client *c)
{
    return c->cfg.url ? c->cfg.url : "the server";
}

static int transport_error(struct client *c, CURLcode rc, const struct sink *s)
{
    curl_off_t connected = 0;
    const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);

    switch (rc) {
    case CURLE_COULDNT_CONNECT:
        return cli_fail("cannot connect to %s: %s: is allotd running there? "
                        "(allot login --url URL points allot at another server)", server(c), why);
    case CURLE_COULDNT_RESOLVE_HOST:
        return cli_fail("cannot find the host of %s: %s: check the address "
                        "(allot login --url URL)", server(c), why);
    case CURLE_OPERATION_TIMEDOUT:
        curl_easy_getinfo(c->curl, CURLINFO_CONNECT_TIME_T, &connected);
        if (connected == 0)
            return cli_fail("no connection to %s within %.1f s: is the server up and "
                            "reachable? (ALLOT_CONNECT_TIMEOUT sets the limit)",
                            server(c), (double)c->connect_ms / 1000.0);
        return cli_fail("%s did not answer within %.1f s: the server is busy or stuck; "
                        "try again, or raise ALLOT_TIMEOUT", server(c),
                        (double)c->total_ms / 1000.0);
    case CURLE_WRITE_ERROR:
        if (s->too_big)
            return cli_fail("the answer of %s is larger than %zu MiB", server(c), BODY_MAX >> 20);
        return cli_fail("cannot write the answer of %s: %s", server(c), why);
    default:
        return cli_fail("cannot talk to %s: %s", server(c), why);
    }
}

static int add_header(struct curl_slist **list, const char *fmt, const char *value)
{
    char *line = cli_strf(fmt, value);
    struct curl_slist *l = line ? curl_slist_append(*list, line) : NULL;

    if (line) {
        memset(line, 0, strlen(line)); /* may hold the token */
        free(line);
    }
    if (!l)
        return -1;
    *list = l;
    return 0;
}

static struct curl_slist *headers(const struct client *c, const struct request *rq)
{
    struct curl_slist *h = NULL;

    if (add_header(&h, "Accept: %s", JSON_TYPE) || add_header(&h, "Expect:%s", "") ||
        (rq->ctype && add_header(&h, "Content-Type: %s", rq->ctype)) ||
        (rq->auth && add_header(&h, "Authorization: Bearer %s", c->cfg.access_token))) {
        curl_slist_free_all(h);
        return NULL;
    }
    return h;
}

static void set_method(CURL *curl, const struct request *rq)
{
    if (strcmp(rq->method, "GET") == 0) {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
        return;
    }
    if (strcmp(rq->method, "POST") == 0)
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
    else
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, rq->method);
    if (rq->body || strcmp(rq->method, "POST") == 0) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)rq->len);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
    }
}

static void set_options(struct client *c, const struct request *rq, struct sink *s,
                        const char *url, struct curl_slist *h)
{
    CURL *curl = c->curl;

    curl_easy_reset(curl);
    c->errbuf[0] = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, rq->follow ? 0L : c->total_ms);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "allot/" ALLOT_VERSION);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, s);
    set_method(curl, rq);
}

/* One exchange. CLI_OK when an answer came, whatever its status. */
static int exchange(struct client *c, const struct request *rq, struct reply *rep)
{
    struct sink s = {rep, rq->stream, c->curl, 0};
    struct curl_slist *h = NULL;
    char *url = NULL;
    CURLcode rc;
    int ret = CLI_FAIL;

    reply_clear(rep);
    url = cli_strf("%s%s", c->cfg.url, rq->path);
    h = url ? headers(c, rq) : NULL;
    if (!h) {
        cli_fail("out of memory");
        goto out;
    }
    set_options(c, rq, &s, url, h);
    rc = curl_easy_perform(c->curl);
    if (rc != CURLE_OK) {
        ret = transport_error(c, rc, &s);
        goto out;
    }
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &rep->status);
    ret = CLI_OK;
out:
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(h);
    free(url);
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
    if (rc == CLI_OK) {
        c->curl_started = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
        c->curl = c->curl_started ? curl_easy_init() : NULL;
        if (!c->curl)
            rc = cli_fail("cannot start libcurl");
    }
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
        curl_easy_cleanup(c->curl);
    if (c->curl_started)
        curl_global_cleanup();
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

static int b64url_value(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '-')
        return 62;
    if (ch == '_')
        return 63;
    return -1;
}

json_t *client_token_claims(const char *token)
{
    const char *p = token ? strchr(token, '.') : NULL, *end;
    unsigned int acc = 0;
    size_t o = 0;
    int bits = 0;
    char *text;
    json_t *claims;

    if (!p)
        return NULL;
    end = strchr(++p, '.');
    if (!end)
        return NULL;
    text = malloc((size_t)(end - p) + 1);
    if (!text)
        return NULL;
    for (; p < end; p++) {
        int v = b64url_value(*p);
        if (v < 0)
            break;
        acc = (acc << 6) | (unsigned int)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            text[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    claims = p == end ? json_loadb(text, o, 0, NULL) : NULL;
    free(text);
    return claims;
}
