/*
 * listq.c: list queries over rows held in memory (departments, projects,
 * node pools, nodes): filterBy, sortBy, sortOrder, offset and limit, the
 * way Run:ai's list endpoints take them.
 *
 * A caller describes its rows with a getter that gives a field's value as
 * text, number or date; an unknown field is a 400 that names it.
 *
 * Invariants:
 *   1. Sorting is stable, with the rows' own order as the final tie-break.
 *   2. Text compares byte-wise; dates compare as milliseconds.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ops[] = {"==", "!=", "<=", ">=", "=@", "!@", "=^", "=$"};

int api_lq_filter(const char *s, size_t n, struct db_filter *f)
{
    size_t i, k, at = 0;
    int op = -1;

    for (i = 0; i + 1 < n && op < 0; i++)
        for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
            if (strncmp(s + i, ops[k], 2) == 0) {
                at = i;
                op = (int)k;
                break;
            }
    if (op < 0 || at == 0 || at >= sizeof(f->field) || n - at - 2 >= sizeof(f->value))
        return -1;
    memcpy(f->field, s, at);
    f->field[at] = 0;
    memcpy(f->op, ops[op], 3);
    memcpy(f->value, s + at + 2, n - at - 2);
    f->value[n - at - 2] = 0;
    return 0;
}

int api_lq_parse(struct api_req *r, struct api_lq *q)
{
    char buf[API_QUERY_VALUE_MAX + 1];
    int64_t offset = 0, limit = API_PAGE_DEFAULT;
    const char *p;

    memset(q, 0, sizeof(*q));
    if (api_query(r, "filterBy", buf, sizeof(buf)) == 0)
        for (p = buf; *p;) {
            size_t n = strcspn(p, ",");
            if (q->n_filters >= DB_MAX_FILTERS || api_lq_filter(p, n, &q->filters[q->n_filters++])) {
                api_error(r, 400, "Bad request", "filterBy: <field><op><value>,...");
                return -1;
            }
            p += n + (p[n] == ',');
        }
    if (api_query(r, "sortBy", q->sort_by, sizeof(q->sort_by)) < 0) {
        api_error(r, 400, "Bad request", "sortBy names no field");
        return -1;
    }
    if (api_query(r, "sortOrder", buf, sizeof(buf)) != 1) {
        if (strcmp(buf, "asc") && strcmp(buf, "desc")) {
            api_error(r, 400, "Bad request", "sortOrder is asc or desc");
            return -1;
        }
        q->desc = buf[0] == 'd';
    }
    q->limit_given = api_query(r, "limit", buf, sizeof(buf)) != 1;
    if (api_query_int(r, "offset", 0, INT32_MAX, &offset) ||
        api_query_int(r, "limit", 1, API_PAGE_MAX, &limit))
        return -1;
    q->offset = (int)offset;
    q->limit = (int)limit;
    return 0;
}

int api_lq_search(struct api_req *r, struct api_lq *q, const char *field)
{
    char text[DB_NAME_LEN];
    struct db_filter *f;

    if (api_query(r, "search", text, sizeof(text)) != 0 || !text[0])
        return 0;
    if (q->n_filters >= DB_MAX_FILTERS) {
        api_error(r, 400, "Bad request", "too many filters");
        return -1;
    }
    f = &q->filters[q->n_filters++];
    snprintf(f->field, sizeof(f->field), "%s", field);
    snprintf(f->op, sizeof(f->op), "=@");
    snprintf(f->value, sizeof(f->value), "%s", text);
    return 0;
}

int api_parse_time(const char *s, int64_t *ms)
{
    return db_time_parse(s, ms) == DB_OK ? 0 : -1;
}

/* -1, 0, 1 comparing a field's value with a filter's text. */
static int compare(const struct api_lv *v, const char *text, int *bad)
{
    double d;
    int64_t ms;
    char *end;

    if (v->kind == API_LV_TEXT) {
        int c = strcmp(v->s ? v->s : "", text);
        return (c > 0) - (c < 0);
    }
    if (v->kind == API_LV_DATE) {
        if (api_parse_time(text, &ms) != 0) {
            *bad = 1;
            return 0;
        }
        return (v->d > (double)ms) - (v->d < (double)ms);
    }
    d = strtod(text, &end);
    if (end == text || *end) {
        *bad = 1;
        return 0;
    }
    return (v->d > d) - (v->d < d);
}

static int text_op(const struct api_lv *v, const struct db_filter *f)
{
    const char *s = v->s ? v->s : "";
    size_t n = strlen(s), m = strlen(f->value);

    if (f->op[1] == '@')
        return (strstr(s, f->value) != NULL) == (f->op[0] == '=');
    if (f->op[1] == '^')
        return strncmp(s, f->value, m) == 0;
    return n >= m && strcmp(s + n - m, f->value) == 0;
}

/* 1 if the row passes filter f, 0 if not, -1 if the filter is bad. */
static int pass(const struct db_filter *f, const void *row, api_lq_get get)
{
    struct api_lv v;
    int c, bad = 0;

    memset(&v, 0, sizeof(v));
    if (get(row, f->field, &v) != 0)
        return -1;
    if (f->op[1] == '@' || f->op[1] == '^' || f->op[1] == '$')
        return v.kind == API_LV_TEXT ? text_op(&v, f) : -1;
    c = compare(&v, f->value, &bad);
    if (bad)
        return -1;
    switch (f->op[0]) {
    case '=': return c == 0;
    case '!': return c != 0;
    case '<': return c <= 0;
    default: return c >= 0;
    }
}

int api_lq_keep(struct api_req *r, const struct api_lq *q, const void *row, api_lq_get get)
{
    int i, ok;

    for (i = 0; i < q->n_filters; i++) {
        ok = pass(&q->filters[i], row, get);
        if (ok < 0) {
            char details[128];
            snprintf(details, sizeof(details), "filterBy: unknown field or bad value in '%s'",
                     q->filters[i].field);
            api_error(r, 400, "Bad request", details);
            return -1;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

struct sort_ctx {
    const struct api_lq *q;
    const char *base;
    size_t size;
    api_lq_get get;
};

static int before(const struct sort_ctx *c, int a, int b)
{
    struct api_lv x, y;
    int k;

    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    c->get(c->base + (size_t)a * c->size, c->q->sort_by, &x);
    c->get(c->base + (size_t)b * c->size, c->q->sort_by, &y);
    if (x.kind == API_LV_TEXT) {
        k = strcmp(x.s ? x.s : "", y.s ? y.s : "");
        k = (k > 0) - (k < 0);
    } else {
        k = (x.d > y.d) - (x.d < y.d);
    }
    if (c->q->desc)
        k = -k;
    return k < 0 || (k == 0 && a < b);
}

/* Stable merge sort of idx[0..n) by the query's sort field. */
static void msort(const struct sort_ctx *c, int *idx, int *tmp, int n)
{
    int mid = n / 2, i = 0, j, o = 0;

    if (n < 2)
        return;
    msort(c, idx, tmp, mid);
    msort(c, idx + mid, tmp, n - mid);
    j = mid;
    while (i < mid && j < n)
        tmp[o++] = before(c, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < mid)
        tmp[o++] = idx[i++];
    while (j < n)
        tmp[o++] = idx[j++];
    memcpy(idx, tmp, sizeof(int) * (size_t)n);
}

int api_lq_order(struct api_req *r, const struct api_lq *q, const void *rows, int n,
                 size_t size, api_lq_get get, int **order)
{
    struct sort_ctx c = {q, rows, size, get};
    struct api_lv v;
    int *tmp, i;

    *order = malloc(sizeof(int) * ((size_t)n + 1));
    tmp = malloc(sizeof(int) * ((size_t)n + 1));
    if (!*order || !tmp) {
        free(*order);
        free(tmp);
        *order = NULL;
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    for (i = 0; i < n; i++)
        (*order)[i] = i;
    memset(&v, 0, sizeof(v));
    if (q->sort_by[0] && n > 0 && get(rows, q->sort_by, &v) != 0) {
        free(*order);
        free(tmp);
        *order = NULL;
        api_error(r, 400, "Bad request", "sortBy names an unknown field");
        return -1;
    }
    if (q->sort_by[0])
        msort(&c, *order, tmp, n);
    free(tmp);
    return 0;
}

int api_lq_select(struct api_req *r, const struct api_lq *q, const struct api_lq_rows *rows,
                  int **kept, int *n_kept)
{
    int *order = NULL, i, k, rc = -1;

    *n_kept = 0;
    *kept = NULL;
    if (api_lq_order(r, q, rows->base, rows->n, rows->size, rows->get, &order) != 0)
        return -1;
    *kept = malloc(sizeof(int) * ((size_t)rows->n + 1));
    if (!*kept) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (i = 0; i < rows->n; i++) {
        k = api_lq_keep(r, q, (const char *)rows->base + (size_t)order[i] * rows->size,
                        rows->get);
        if (k < 0)
            goto out;
        if (k)
            (*kept)[(*n_kept)++] = order[i];
    }
    rc = 0;
out:
    free(order);
    if (rc != 0) {
        free(*kept);
        *kept = NULL;
        *n_kept = 0;
    }
    return rc;
}

json_t *api_lq_page(struct api_req *r, const struct api_lq *q, const struct api_lq_rows *rows,
                    int count_only, int *n_kept)
{
    int *kept = NULL, i;
    long long end = (long long)q->offset + q->limit;
    json_t *a = NULL;

    *n_kept = 0;
    if (api_lq_select(r, q, rows, &kept, n_kept) != 0)
        return NULL;
    if (count_only) {
        api_reply(r, 200, json_pack("{s:i}", "count", *n_kept));
        goto out;
    }
    a = json_array();
    for (i = q->offset; i < *n_kept && i < end; i++)
        json_array_append_new(a, rows->to_json(r, (const char *)rows->base +
                                                      (size_t)kept[i] * rows->size));
out:
    free(kept);
    return a;
}

void api_lq_reply(struct api_req *r, const struct api_lq *q, const struct api_lq_rows *rows,
                  const char *key, int count_only)
{
    long long end = (long long)q->offset + q->limit;
    int n_kept;
    json_t *a = api_lq_page(r, q, rows, count_only, &n_kept), *o;

    if (!a)
        return;
    o = json_pack("{s:o}", key, a);
    if (o && n_kept > end)
        json_object_set_new(o, "next", json_integer(end));
    api_reply(r, 200, o);
}
