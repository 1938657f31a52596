/*
 * fuzz_reply.c: the targets' stand-in for the connection a reply goes to
 * (see fuzz.h), the check of what was sent, and the temporary database
 * the request targets run against (fuzz_db_open).
 *
 * Step 1  mg_write() appends to one buffer; mg_get_response_code_text()
 *         gives a fixed reason phrase (the status line is checked, not
 *         civetweb's wording).
 * Step 2  fuzz_reply_check() splits the buffer at the blank line, reads the
 *         status and Content-Length from the head, and parses the body.
 */
#include "fuzz.h"

#include <civetweb.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *sent;
static size_t sent_len, sent_cap;
static int writes;

int mg_write(struct mg_connection *conn, const void *buf, size_t len)
{
    (void)conn;
    if (sent_len + len + 1 > sent_cap) {
        size_t cap = (sent_len + len + 1) * 2;
        char *p = realloc(sent, cap);
        if (!p)
            abort();
        sent = p;
        sent_cap = cap;
    }
    memcpy(sent + sent_len, buf, len);
    sent_len += len;
    sent[sent_len] = 0;
    writes++;
    return (int)len;
}

const char *mg_get_response_code_text(const struct mg_connection *conn, int response_code)
{
    (void)conn;
    (void)response_code;
    return "Reason";
}

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    if (sent_len)
        fprintf(stderr, "reply sent:\n%.*s\n", (int)sent_len, sent);
    abort();
}

void fuzz_reply_reset(void)
{
    sent_len = 0;
    writes = 0;
    if (sent)
        sent[0] = 0;
}

void fuzz_reply_none(const struct api_req *r)
{
    FUZZ_ASSERT(sent_len == 0);
    FUZZ_ASSERT(r->status == 0);
}

void fuzz_reply_check(const struct api_req *r, int want_status)
{
    const char *body, *length;
    json_t *o;
    int status = 0;
    size_t body_len;

    FUZZ_ASSERT(writes == 1);
    FUZZ_ASSERT(sscanf(sent, "HTTP/1.1 %d ", &status) == 1);
    FUZZ_ASSERT(status == r->status);
    FUZZ_ASSERT(want_status == 0 || status == want_status);
    body = strstr(sent, "\r\n\r\n");
    FUZZ_ASSERT(body != NULL);
    body += 4;
    body_len = sent_len - (size_t)(body - sent);
    length = strstr(sent, "\r\nContent-Length: ");
    FUZZ_ASSERT(length != NULL && length < body);
    FUZZ_ASSERT(strtoull(length + 18, NULL, 10) == body_len);
    if (status < 400)
        return;
    o = json_loadb(body, body_len, 0, NULL);
    FUZZ_ASSERT(json_is_object(o));
    FUZZ_ASSERT(json_integer_value(json_object_get(o, "code")) == status);
    FUZZ_ASSERT(json_is_string(json_object_get(o, "message")));
    FUZZ_ASSERT(json_is_string(json_object_get(o, "details")));
    json_decref(o);
}

const char *fuzz_reply_body(void)
{
    const char *body = sent ? strstr(sent, "\r\n\r\n") : NULL;

    return body ? body + 4 : "";
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* ---- the targets' database ---- */

static struct db *fuzz_db;
static char fuzz_db_dir[64], fuzz_db_path[128];

static void fuzz_db_remove(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", ".lock"};
    char p[160];
    size_t i;

    db_close(fuzz_db);
    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", fuzz_db_path, suffixes[i]);
        unlink(p);
    }
    rmdir(fuzz_db_dir);
}

struct db *fuzz_db_open(const char *tag, const char *const *pools, size_t n_pools)
{
    struct db_pool pool;
    size_t i;

    snprintf(fuzz_db_dir, sizeof(fuzz_db_dir), "/tmp/allot-fuzz-%s-XXXXXX", tag);
    FUZZ_ASSERT(mkdtemp(fuzz_db_dir) != NULL);
    snprintf(fuzz_db_path, sizeof(fuzz_db_path), "%s/fuzz.db", fuzz_db_dir);
    FUZZ_ASSERT(db_open(fuzz_db_path, DB_OPEN_CREATE, &fuzz_db) == DB_OK);
    atexit(fuzz_db_remove);
    for (i = 0; i < n_pools; i++) {
        memset(&pool, 0, sizeof(pool));
        snprintf(pool.name, sizeof(pool.name), "%s", pools[i]);
        snprintf(pool.label_key, sizeof(pool.label_key), "pool");
        snprintf(pool.label_value, sizeof(pool.label_value), "%s", pools[i]);
        FUZZ_ASSERT(db_pool_insert(fuzz_db, &pool) == DB_OK);
    }
    return fuzz_db;
}
