/*
 * h_audit.c: GET /api/v1/audit/log and /api/v1/audit/log/file, the audit
 * log's rows (audit.c records them) as Run:ai's AuditLog: a time window
 * (start and end, required), filterBy, sortBy and sortOrder, offset and
 * numberOfSamples (the page's size); the file form as CSV or JSON.
 *
 * The window's rows are read (at most AUDIT_SCAN_MAX: a wider window is a
 * 400 asking for a narrower one), then filtered, sorted and paged in
 * memory (listq.c).
 */
#include "api.h"
#include "db_audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUDIT_SCAN_MAX 200000
#define AUDIT_PAGE_MAX 1000
#define AUDIT_PAGE_DEFAULT 20

static const char *const filter_fields[] = {"timestamp", "subject", "subject_type", "source_ip",
                                            "action", "result", "url", "entity_type",
                                            "entity_name", "cluster_name", NULL};
static const char *const sort_fields[] = {"timestamp", "subject", "subject_type", "source_ip",
                                          "action", "http_method", "result", "url",
                                          "entity_type", "entity_name", "entity_id", NULL};

static int listed(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static const char *result_of(const struct db_audit *x)
{
    return x->status < 400 ? "Succeeded" : "Failed";
}

static int audit_get(const void *row, const char *f, struct api_lv *v)
{
    const struct db_audit *x = row;
    static const struct {
        const char *name;
        size_t off;
    } texts[] = {
        {"subject", offsetof(struct db_audit, subject)},
        {"subject_type", offsetof(struct db_audit, subject_type)},
        {"source_ip", offsetof(struct db_audit, source_ip)},
        {"action", offsetof(struct db_audit, action)},
        {"http_method", offsetof(struct db_audit, method)},
        {"url", offsetof(struct db_audit, url)},
        {"entity_type", offsetof(struct db_audit, entity_type)},
        {"entity_name", offsetof(struct db_audit, entity_name)},
        {"entity_id", offsetof(struct db_audit, entity_id)},
    };
    size_t i;

    v->kind = API_LV_TEXT;
    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (strcmp(f, texts[i].name) == 0) {
            v->s = (const char *)x + texts[i].off;
            return 0;
        }
    if (strcmp(f, "result") == 0)
        v->s = result_of(x);
    else if (strcmp(f, "cluster_name") == 0)
        v->s = API_CLUSTER_NAME;
    else if (strcmp(f, "timestamp") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)x->at_ms;
    } else
        return -1;
    return 0;
}

static json_t *audit_json(struct api_req *r, const void *row)
{
    const struct db_audit *x = row;
    json_t *o = json_pack("{s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s,"
                          " s:i, s:s, s:s}",
                          "id", x->id, "timestamp", api_time(x->at_ms), "tenant_id", "1",
                          "subject", x->subject, "subject_type", x->subject_type, "source_ip",
                          x->source_ip, "action", x->action, "http_method", x->method, "url",
                          x->url, "entity_type", x->entity_type, "entity_name", x->entity_name,
                          "entity_id", x->entity_id, "result", result_of(x), "http_status_code",
                          x->status, "cluster_name", API_CLUSTER_NAME, "cluster_id",
                          API_CLUSTER_ID);

    (void)r;
    return o;
}

struct audit_q {
    struct api_lq lq;
    int64_t start, end;
    int64_t offset, n;
};

/* start, end (required), filterBy, and, where the route has them,
 * sortBy, sortOrder and offset; numberOfSamples. -1 replied 400. */
static int audit_q_in(struct api_req *r, struct audit_q *q, int listing)
{
    char buf[API_QUERY_VALUE_MAX + 1];
    const char *p;

    memset(q, 0, sizeof(*q));
    q->n = AUDIT_PAGE_DEFAULT;
    if (api_query(r, "start", buf, sizeof(buf)) || api_parse_time(buf, &q->start) ||
        api_query(r, "end", buf, sizeof(buf)) || api_parse_time(buf, &q->end) ||
        q->end < q->start) {
        api_error(r, 400, "Bad request", "start and end are required ISO-8601 times, start <= end");
        return -1;
    }
    if (api_query_int(r, "numberOfSamples", 0, AUDIT_PAGE_MAX, &q->n) ||
        (listing && api_query_int(r, "offset", 0, INT32_MAX, &q->offset)))
        return -1;
    if (api_query(r, "filterBy", buf, sizeof(buf)) == 0)
        for (p = buf; *p;) {
            size_t n = strcspn(p, ",");
            struct db_filter *f = &q->lq.filters[q->lq.n_filters];
            if (q->lq.n_filters >= DB_MAX_FILTERS || api_lq_filter(p, n, f) ||
                !listed(f->field, filter_fields)) {
                api_error(r, 400, "Bad request",
                          "filterBy: <field><op><value>,... of timestamp, subject, subject_type,"
                          " source_ip, action, result, url, entity_type, entity_name,"
                          " cluster_name");
                return -1;
            }
            q->lq.n_filters++;
            p += n + (p[n] == ',');
        }
    if (!listing)
        return 0;
    if (api_query(r, "sortBy", q->lq.sort_by, sizeof(q->lq.sort_by)) == 0 &&
        !listed(q->lq.sort_by, sort_fields)) {
        api_error(r, 400, "Bad request", "sortBy names no field of an audit log row");
        return -1;
    }
    if (api_query(r, "sortOrder", buf, sizeof(buf)) == 0) {
        if (strcmp(buf, "asc") && strcmp(buf, "desc")) {
            api_error(r, 400, "Bad request", "sortOrder is asc or desc");
            return -1;
        }
        q->lq.desc = buf[0] == 'd';
    }
    return 0;
}

/* The window's rows filtered and sorted: *rows (free) and *kept (free)
 * with the kept rows' indexes; -1 replied. */
static int audit_select(struct api_req *r, const struct audit_q *q, struct db_audit **rows,
                        int **kept, int *n_kept)
{
    int n = 0, truncated = 0;
    int rc = db_audit_list(r->app->db, q->start, q->end, AUDIT_SCAN_MAX, rows, &n, &truncated);

    *kept = NULL;
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the audit log");
        return -1;
    }
    if (truncated) {
        api_error(r, 400, "Bad request",
                  "the window holds more than 200000 audit log rows: narrow start and end");
        return -1;
    }
    return api_lq_select(r, &q->lq,
                         &(struct api_lq_rows){*rows, n, sizeof(**rows), audit_get, audit_json},
                         kept, n_kept);
}

void api_h_audit_log(struct api_req *r)
{
    struct db_audit *rows = NULL;
    struct audit_q q;
    int *kept = NULL, n_kept = 0;
    int64_t i;
    json_t *a, *o;

    if (audit_q_in(r, &q, 1) != 0 || audit_select(r, &q, &rows, &kept, &n_kept) != 0)
        goto out;
    a = json_array();
    for (i = q.offset; i < n_kept && i < q.offset + q.n; i++)
        json_array_append_new(a, audit_json(r, &rows[kept[i]]));
    /* the document requires "logs" and describes "audit_logs": both carry the page */
    o = json_pack("{s:i, s:O, s:o}", "total", n_kept, "logs", a, "audit_logs", a);
    if (o && q.offset + q.n < n_kept)
        json_object_set_new(o, "next", json_integer(q.offset + q.n));
    api_reply(r, 200, o);
out:
    free(kept);
    free(rows);
}

/* One row of the file: every field quoted, a formula guarded (jw_csv). */
static void csv_row(struct jw *c, const struct db_audit *x)
{
    char at[40], status[16];
    const char *fields[] = {at, x->subject, x->subject_type, x->source_ip, x->action, x->method,
                            x->url, x->entity_type, x->entity_name, x->entity_id, result_of(x),
                            status, API_CLUSTER_NAME};
    size_t i;

    api_time_text(x->at_ms, at, sizeof(at));
    snprintf(status, sizeof(status), "%d", x->status);
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        jw_csv(c, i ? ',' : 0, fields[i], JW_CSV_QUOTE | JW_CSV_TEXT);
    jw_raw(c, "\n", 1);
}

void api_h_audit_file(struct api_req *r)
{
    static const char head[] = "timestamp,subject,subject_type,source_ip,action,http_method,url,"
                               "entity_type,entity_name,entity_id,result,http_status_code,"
                               "cluster_name\n";
    struct db_audit *rows = NULL;
    struct audit_q q;
    struct jw c = {0};
    char type[16] = "CSV", extra[96], *text = NULL;
    size_t len = 0;
    int *kept = NULL, n_kept = 0, json = 0;
    int64_t i;

    if (api_query(r, "file_type", type, sizeof(type)) == 0 && strcmp(type, "CSV") &&
        strcmp(type, "JSON")) {
        api_error(r, 400, "Bad request", "file_type is CSV or JSON");
        return;
    }
    json = strcmp(type, "JSON") == 0;
    if (audit_q_in(r, &q, 0) != 0 || audit_select(r, &q, &rows, &kept, &n_kept) != 0)
        goto out;
    if (json) {
        json_t *a = json_array();
        char *s;
        for (i = 0; i < n_kept && i < q.n; i++)
            json_array_append_new(a, audit_json(r, &rows[kept[i]]));
        s = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        if (s)
            jw_raw(&c, s, strlen(s));
        free(s);
        c.failed |= !s;
    } else {
        jw_raw(&c, head, sizeof(head) - 1);
        for (i = 0; i < n_kept && i < q.n; i++)
            csv_row(&c, &rows[kept[i]]);
    }
    text = jw_take(&c, &len);
    if (!text) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    snprintf(extra, sizeof(extra), "Content-Disposition: attachment; filename=\"audit-log.%s\"\r\n",
             json ? "json" : "csv");
    api_reply_with(r, 200, "application/octet-stream", text, len, extra);
out:
    free(text);
    free(kept);
    free(rows);
}
