/*
 * jw.c: a small JSON writer for the hot replies (workloads), which writes
 * text straight into one growing buffer instead of building a jansson
 * tree and dumping it; a stored JSON text (a workload's spec) is copied in
 * as it is.
 *
 * Invariants:
 *   1. The output is valid JSON as long as the caller pairs every
 *      jw_open with its jw_close and puts a key before every value inside
 *      an object; commas are placed by the writer.
 *   2. Strings are escaped per RFC 8259 (quote, backslash, control
 *      characters); bytes >= 0x80 pass through (the input is UTF-8).
 *   3. After an allocation failure the writer keeps failing (jw.failed)
 *      and jw_take() gives NULL; nothing is written past the buffer.
 *   4. Numbers and times are written digit by digit, as snprintf's "%lld"
 *      and "%04d-%02d-..." would write them (a list of 50 workloads wrote
 *      about 700 numbers and times through vfprintf, 8% of its profile).
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* v's decimal digits at out (at least 20 bytes); their count. */
static size_t put_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* v as exactly `width` digits (0 <= v < 10^width). */
static void put_fixed(char *out, int v, int width)
{
    while (width-- > 0) {
        out[width] = (char)('0' + v % 10);
        v /= 10;
    }
}

/* "-" and the digits of v (at least 21 bytes); their count. */
static size_t put_i64(char *out, int64_t v)
{
    if (v >= 0)
        return put_u64(out, (uint64_t)v);
    out[0] = '-';
    return 1 + put_u64(out + 1, (uint64_t)0 - (uint64_t)v);
}

void api_time_text(int64_t ms, char *buf, size_t len)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    int year, milli = (int)(ms % 1000);

    gmtime_r(&s, &tm);
    year = tm.tm_year + 1900;
    if (len < 25 || year < 0 || year > 9999 || milli < 0) {
        snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
        return;
    }
    /* YYYY-MM-DDTHH:MM:SS.mmmZ */
    put_fixed(buf, year, 4);
    buf[4] = '-';
    put_fixed(buf + 5, tm.tm_mon + 1, 2);
    buf[7] = '-';
    put_fixed(buf + 8, tm.tm_mday, 2);
    buf[10] = 'T';
    put_fixed(buf + 11, tm.tm_hour, 2);
    buf[13] = ':';
    put_fixed(buf + 14, tm.tm_min, 2);
    buf[16] = ':';
    put_fixed(buf + 17, tm.tm_sec, 2);
    buf[19] = '.';
    put_fixed(buf + 20, milli, 3);
    buf[23] = 'Z';
    buf[24] = 0;
}

static void grow(struct jw *w, size_t more)
{
    size_t cap;
    char *p;

    if (w->failed || w->n + more + 1 <= w->cap)
        return;
    cap = w->cap ? w->cap : 1024;
    while (cap < w->n + more + 1)
        cap *= 2;
    p = realloc(w->buf, cap);
    if (!p) {
        w->failed = 1;
        return;
    }
    w->buf = p;
    w->cap = cap;
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
    grow(w, n);
    if (w->failed)
        return;
    memcpy(w->buf + w->n, s, n);
    w->n += n;
    w->buf[w->n] = 0;
}

static void comma(struct jw *w)
{
    if (w->need_comma)
        jw_raw(w, ",", 1);
    w->need_comma = 0;
}

void jw_open(struct jw *w, char c)
{
    comma(w);
    jw_raw(w, &c, 1);
}

void jw_close(struct jw *w, char c)
{
    jw_raw(w, &c, 1);
    w->need_comma = 1;
}

static void escaped(struct jw *w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    const unsigned char *run = p;

    size_t n = 0;

    while (p[n] >= 0x20 && p[n] != '"' && p[n] != '\\')
        n++;
    if (!p[n]) { /* the common case: nothing to escape, one copy */
        grow(w, n + 2);
        if (w->failed)
            return;
        w->buf[w->n] = '"';
        memcpy(w->buf + w->n + 1, p, n);
        w->buf[w->n + 1 + n] = '"';
        w->n += n + 2;
        w->buf[w->n] = 0;
        return;
    }
    jw_raw(w, "\"", 1);
    for (; *p; p++) {
        char e[6] = {'\\', 'u', '0', '0', 0, 0};
        if (*p >= 0x20 && *p != '"' && *p != '\\')
            continue;
        jw_raw(w, (const char *)run, (size_t)(p - run));
        run = p + 1;
        if (*p == '"' || *p == '\\') {
            e[1] = (char)*p;
            jw_raw(w, e, 2);
        } else if (*p == '\n') {
            jw_raw(w, "\\n", 2);
        } else {
            e[4] = hex[*p >> 4];
            e[5] = hex[*p & 15];
            jw_raw(w, e, 6);
        }
    }
    jw_raw(w, (const char *)run, (size_t)(p - run));
    jw_raw(w, "\"", 1);
}

void jw_key(struct jw *w, const char *key)
{
    comma(w);
    escaped(w, key);
    jw_raw(w, ":", 1);
}

void jw_str(struct jw *w, const char *key, const char *s)
{
    if (key)
        jw_key(w, key);
    else
        comma(w);
    escaped(w, s);
    w->need_comma = 1;
}

void jw_int(struct jw *w, const char *key, int64_t v)
{
    char buf[32];
    size_t n = put_i64(buf, v);

    if (key)
        jw_key(w, key);
    else
        comma(w);
    jw_raw(w, buf, n);
    w->need_comma = 1;
}

void jw_milli(struct jw *w, const char *key, int64_t milli)
{
    char buf[48];
    uint64_t a = milli < 0 ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    size_t n = 0;

    if (milli < 0)
        buf[n++] = '-';
    n += put_u64(buf + n, a / 1000);
    buf[n++] = '.';
    put_fixed(buf + n, (int)(a % 1000), 3);
    n += 3;
    while (n > 0 && buf[n - 1] == '0')
        n--;
    if (n > 0 && buf[n - 1] == '.')
        n--;
    if (key)
        jw_key(w, key);
    else
        comma(w);
    jw_raw(w, buf, (size_t)n);
    w->need_comma = 1;
}

void jw_bool(struct jw *w, const char *key, int v)
{
    if (key)
        jw_key(w, key);
    else
        comma(w);
    jw_raw(w, v ? "true" : "false", v ? 4 : 5);
    w->need_comma = 1;
}

void jw_null(struct jw *w, const char *key)
{
    if (key)
        jw_key(w, key);
    else
        comma(w);
    jw_raw(w, "null", 4);
    w->need_comma = 1;
}

void jw_time(struct jw *w, const char *key, int64_t ms)
{
    char buf[40];

    if (ms <= 0) {
        jw_null(w, key);
        return;
    }
    api_time_text(ms, buf, sizeof(buf));
    jw_str(w, key, buf);
}

void jw_json(struct jw *w, const char *key, const char *text, const char *dflt)
{
    const char *t = text && text[0] ? text : dflt;

    if (key)
        jw_key(w, key);
    else
        comma(w);
    jw_raw(w, t, strlen(t));
    w->need_comma = 1;
}

char *jw_take(struct jw *w, size_t *len)
{
    char *s = w->failed ? NULL : w->buf;

    if (w->failed)
        free(w->buf);
    *len = s ? w->n : 0;
    memset(w, 0, sizeof(*w));
    return s;
}

void jw_reply(struct api_req *r, int status, struct jw *w)
{
    size_t len;
    char *s = jw_take(w, &len);

    if (!s) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    api_reply_text(r, status, "application/json", s, len);
    free(s);
}
