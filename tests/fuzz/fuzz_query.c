/*
 * fuzz_query.c: a list request's query string, the way the server reads
 * it before any handler and then in the list handlers.
 *
 * Step 1  api_query_valid(): every parameter decodes, none too long;
 * Step 2  api_lq_parse(): filterBy, sortBy, sortOrder, offset, limit;
 * Step 3  api_lq_reply() over a fixed table of rows with a text, a number
 *         and a date field: filters, sorting, the page and its "next";
 * and each filter value through api_parse_time(), whose result (in
 * 1970..9999) must come back unchanged through api_time_text() and
 * api_parse_time() again.
 * Checked: a refused query got one 400 {code, message, details}; an
 * accepted one a 200 whose page holds at most `limit` rows, in order.
 */
#include "fuzz.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct row {
    const char *name;
    double gpus;
    double created_ms;
};

static const struct row rows[] = {
    {"alpha", 1, 1700000000000.0},    {"beta", 0.5, 1600000000000.0},
    {"gamma", 8, 1700000000000.0},    {"", 0, 0},
    {"alpha-2", -1, 1800000000123.0}, {"zeta", 64, 1500000000000.0},
};

static int row_get(const void *p, const char *field, struct api_lv *v)
{
    const struct row *row = p;

    if (strcmp(field, "name") == 0) {
        v->kind = API_LV_TEXT;
        v->s = row->name;
    } else if (strcmp(field, "gpus") == 0) {
        v->kind = API_LV_NUMBER;
        v->d = row->gpus;
    } else if (strcmp(field, "createdAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = row->created_ms;
    } else {
        return -1;
    }
    return 0;
}

static json_t *row_json(struct api_req *r, const void *p)
{
    (void)r;
    return json_pack("{s:i}", "row", (int)((const struct row *)p - rows));
}

static void time_check(const char *text)
{
    int64_t ms, again;
    char buf[64];

    /* stored times (what api_time_text writes) lie in 1970..9999 */
    if (api_parse_time(text, &ms) != 0 || ms < 0 || ms >= INT64_C(253402300800000))
        return;
    api_time_text(ms, buf, sizeof(buf));
    FUZZ_ASSERT(api_parse_time(buf, &again) == 0);
    FUZZ_ASSERT(again == ms);
}

/* The 200 answer: at most limit rows, each a row of the table, once. */
static void page_check(const struct api_lq *q)
{
    json_t *o = json_loads(fuzz_reply_body(), 0, NULL), *a, *row;
    size_t i;
    int seen = 0;

    FUZZ_ASSERT(json_is_object(o));
    a = json_object_get(o, "items");
    FUZZ_ASSERT(json_is_array(a));
    FUZZ_ASSERT(json_array_size(a) <= (size_t)q->limit);
    json_array_foreach(a, i, row) {
        json_int_t k = json_integer_value(json_object_get(row, "row"));
        FUZZ_ASSERT(k >= 0 && k < (json_int_t)(sizeof(rows) / sizeof(rows[0])));
        FUZZ_ASSERT(!(seen & (1 << k)));
        seen |= 1 << k;
    }
    if (json_object_get(o, "next"))
        FUZZ_ASSERT(json_integer_value(json_object_get(o, "next")) ==
                    (json_int_t)q->offset + q->limit);
    json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct api_lq_rows table = {rows, (int)(sizeof(rows) / sizeof(rows[0])),
                                      sizeof(rows[0]), row_get, row_json};
    struct api_req r;
    struct api_lq q;
    char *query = fuzz_text(data, size);
    int i;

    memset(&r, 0, sizeof(r));
    r.method = "GET";
    r.path = "/api/v1/org-unit/projects";
    r.query = query;
    fuzz_reply_reset();
    if (!api_query_valid(&r)) {
        fuzz_reply_check(&r, 400);
        goto out;
    }
    fuzz_reply_none(&r);
    if (api_lq_parse(&r, &q) != 0) {
        fuzz_reply_check(&r, 400);
        goto out;
    }
    fuzz_reply_none(&r);
    FUZZ_ASSERT(q.offset >= 0 && q.limit >= 1 && q.limit <= API_PAGE_MAX);
    FUZZ_ASSERT(q.n_filters >= 0 && q.n_filters <= DB_MAX_FILTERS);
    for (i = 0; i < q.n_filters; i++) {
        FUZZ_ASSERT(q.filters[i].field[0] != 0);
        time_check(q.filters[i].value);
    }
    api_lq_reply(&r, &q, &table, "items", 0);
    fuzz_reply_check(&r, 0);
    FUZZ_ASSERT(r.status == 200 || r.status == 400);
    if (r.status == 200)
        page_check(&q);
out:
    free(query);
    return 0;
}
