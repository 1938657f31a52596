/*
 * idempotency.c: the `Idempotency-Key` request header of the workload
 * submissions (POST /api/v1/workloads/{trainings,workspaces,distributed,
 * inferences}, /api/v1/workloads/submissions) and of the batch route
 * (POST /api/v1/workloads/batch).
 *
 * A retry by the same principal with the same key and the same request
 * (method, path, query and body) within a day is answered the first
 * answer, status and body, and makes no second workload; the same key with
 * another request is a 400 that says so. The keys live in the database
 * (db_idem.h), so a retry that another replica answers after a failover,
 * or the same allotd after a restart, finds them too.
 *
 * Steps, around the route's handler (http.c's serve()):
 *   1. begin: the key is reserved in its own write before the handler
 *      runs. A key held by a finished answer of the same request replays
 *      it; held by another request, 400.
 *   2. A key held but not finished (its first request is being answered,
 *      or its server died between the workload's commit and the answer)
 *      runs the handler again, marked a retry: the names are unique per
 *      project, so no second workload can commit, and a handler that
 *      meets its own names taken since the key was reserved, by the same
 *      principal, answers those workloads (api_idem_retried()).
 *   3. end: a 2xx answer is kept under the key; any other frees the key,
 *      so a refusal (a cap reached, the database unavailable) is checked
 *      anew on retry.
 *
 * Invariant: the reply a kept answer replays is the bytes the first one
 * sent (captured by http.c's senders while r->idem is set).
 */
#include "api.h"
#include "agent_int.h"
#include "db_idem.h"

#include <civetweb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct api_idem {
    struct db_idem k;
    int retry;          /* the key was held, unfinished, by the same request */
    int64_t held_since; /* then: when it was reserved */
    int status;         /* the answer sent */
    char *body;
    size_t len;
};

static int covered(api_handler h)
{
    return h == api_h_wl_create_training || h == api_h_wl_create_workspace ||
           h == api_h_wl_create_distributed || h == api_h_wl_create_inference ||
           h == api_h_wl_submissions || h == api_h_wl_batch;
}

static int key_valid(const char *s)
{
    size_t n = 0;

    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x21 || (unsigned char)s[n] > 0x7e)
            return 0;
    return n > 0 && n < DB_IDEM_KEY_LEN;
}

/* The request's digest: method, path, query and body. */
static int digest_of(const struct api_req *r, char out[DB_IDEM_DIGEST_LEN])
{
    const char *q = r->query ? r->query : "";
    size_t head = strlen(r->method) + strlen(r->path) + strlen(q) + 3;
    char *buf = malloc(head + r->body_len + 1);
    int n;

    if (!buf)
        return -1;
    n = snprintf(buf, head + 1, "%s %s?%s\n", r->method, r->path, q);
    if (r->body_len)
        memcpy(buf + n, r->body, r->body_len);
    api_sha256_hex(buf, (size_t)n + r->body_len, out);
    free(buf);
    return 0;
}

int api_idem_begin(struct api_req *r, api_handler h)
{
    const char *key = mg_get_header(r->conn, "Idempotency-Key");
    struct api_idem *x;
    struct db_idem held;
    int rc;

    if (!key || !covered(h))
        return 0;
    if (!key_valid(key)) {
        api_error(r, 400, "Bad request",
                  "Idempotency-Key: 1 to 255 visible ASCII characters");
        return 1;
    }
    x = calloc(1, sizeof(*x));
    if (!x || digest_of(r, x->k.digest) != 0) {
        free(x);
        api_error(r, 500, "Internal error", "out of memory");
        return 1;
    }
    snprintf(x->k.principal, sizeof(x->k.principal), "%s", r->who.user.login);
    snprintf(x->k.key, sizeof(x->k.key), "%s", key);
    x->k.created_at = api_now_ms();
    rc = db_idem_reserve(r->app->db, &x->k, &held);
    if (rc == DB_ECONFLICT && strcmp(held.digest, x->k.digest) != 0) {
        api_error(r, 400, "Bad request",
                  "Idempotency-Key: this key was used with another request in the last 24 h; "
                  "a retry sends the same body, a new request a new key");
        rc = 1;
    } else if (rc == DB_ECONFLICT && held.status > 0) {
        api_reply_with(r, held.status, "application/json", held.reply ? held.reply : "",
                       held.reply ? strlen(held.reply) : 0, "Idempotent-Replayed: true\r\n");
        rc = 1;
    } else if (rc == DB_ECONFLICT) {
        x->retry = 1;
        x->held_since = held.created_at;
        rc = 0;
    } else if (rc != DB_OK) {
        api_db_error(r, rc, "cannot keep the Idempotency-Key");
        rc = 1;
    }
    free(held.reply);
    if (rc == 0)
        r->idem = x;
    else
        free(x);
    return rc;
}

void api_idem_capture(struct api_req *r, int status, const char *body, size_t len)
{
    struct api_idem *x = r->idem;

    if (!x || x->body)
        return;
    x->status = status;
    x->body = malloc(len + 1);
    if (!x->body)
        return;
    memcpy(x->body, body, len);
    x->body[len] = 0;
    x->len = len;
}

void api_idem_end(struct api_req *r)
{
    struct api_idem *x = r->idem;
    int rc;

    if (!x)
        return;
    r->idem = NULL;
    if (x->status >= 200 && x->status < 300 && x->body && strlen(x->body) == x->len)
        rc = db_idem_finish(r->app->db, x->k.principal, x->k.key, x->status, x->body);
    else
        rc = db_idem_drop(r->app->db, x->k.principal, x->k.key);
    if (rc != DB_OK && rc != DB_ENOTFOUND)
        fprintf(stderr, "allotd: the answer to Idempotency-Key %s of %s was not kept: %s\n",
                x->k.key, x->k.principal, db_strerror(rc));
    free(x->body);
    free(x);
}

int api_idem_retry(const struct api_req *r, int64_t *since_ms)
{
    if (!r->idem || !r->idem->retry)
        return 0;
    *since_ms = r->idem->held_since;
    return 1;
}
