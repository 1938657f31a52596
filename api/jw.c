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
 *      and "%04d-%02d-..." of gmtime_r() would write them (a list of 50
 *      workloads wrote about 700 numbers and times through vfprintf, 8% of
 *      its profile); a date from 1970 to 9999 is computed from the day
 *      count, without gmtime_r().
 *   5. A string is scanned once against a table of the bytes that need no
 *      escape; one with none (nearly all: keys, ids, names) is copied with
 *      its quotes, comma and colon in one write.
 *   6. The buffer starts with API_REPLY_HEAD bytes of room, where
 *      jw_reply() writes the reply's header: the text goes out in one
 *      write without being copied (a list of 50 is about 75 KB).
 *   7. Keys are names written in the code (ASCII, nothing to escape):
 *      jw_key() copies them without the scan of invariant 5 (a list of 50
 *      writes about 4,000 keys); assertions check it in builds that have
 *      them. Values, whatever their source, are always scanned.
 */
#include "api.h"
#include "decimal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* v as exactly `width` digits (0 <= v < 10^width). */
static void put_fixed(char *out, int v, int width)
{
    while (width-- > 0) {
        out[width] = (char)('0' + v % 10);
        v /= 10;
    }
}

/* The proleptic Gregorian date of a day count since 1970-01-01 (>= 0):
 * H. Hinnant's days_from_civil inverted, eras of 400 years. */
static void civil(int64_t days, int *year, int *month, int *day)
{
    int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;

    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = (int)(yoe + era * 400 + (*month <= 2));
}

void api_time_text(int64_t ms, char *buf, size_t len)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    int year, month, day, milli = (int)(ms % 1000), sec;

    if (ms < 0 || ms >= 253402300800000LL || len < 25) { /* outside years 1970-9999 */
        gmtime_r(&s, &tm);
        snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
        return;
    }
    civil(ms / 86400000, &year, &month, &day);
    sec = (int)(ms / 1000 % 86400);
    /* YYYY-MM-DDTHH:MM:SS.mmmZ */
    put_fixed(buf, year, 4);
    buf[4] = '-';
    put_fixed(buf + 5, month, 2);
    buf[7] = '-';
    put_fixed(buf + 8, day, 2);
    buf[10] = 'T';
    put_fixed(buf + 11, sec / 3600, 2);
    buf[13] = ':';
    put_fixed(buf + 14, sec / 60 % 60, 2);
    buf[16] = ':';
    put_fixed(buf + 17, sec % 60, 2);
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
    if (!w->buf)
        w->n = API_REPLY_HEAD; /* the room a reply's header takes (jw_reply) */
    cap = w->cap ? w->cap : 2048;
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

/* Room for `more` bytes and the terminator: the place to write them, or
 * NULL after a failure. */
static char *room(struct jw *w, size_t more)
{
    if (w->n + more + 1 > w->cap)
        grow(w, more);
    return w->failed ? NULL : w->buf + w->n;
}

void jw_reserve(struct jw *w, size_t more)
{
    grow(w, more);
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
    char *o = room(w, n);

    if (!o)
        return;
    memcpy(o, s, n);
    w->n += n;
    w->buf[w->n] = 0;
}

void jw_csv(struct jw *w, char sep, const char *s, int flags)
{
    int formula = (flags & JW_CSV_TEXT) && s[0] && strchr("=+-@", s[0]);
    int quote = (flags & JW_CSV_QUOTE) || formula || strpbrk(s, ",\"\r\n");

    if (sep)
        jw_raw(w, &sep, 1);
    if (!quote) {
        jw_raw(w, s, strlen(s));
        return;
    }
    jw_raw(w, formula ? "\"'" : "\"", formula ? 2 : 1);
    for (; *s; s++)
        jw_raw(w, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
    jw_raw(w, "\"", 1);
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

/* Bytes a JSON string carries as they are: not a control character, a
 * quote or a backslash (NUL, the end, is not one of them). */
static const unsigned char plain[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0),
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,   /* 0x20-0x2f: '"' */
    R16(1), R16(1),
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,   /* 0x50-0x5f: '\\' */
    R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1),
#undef R16
};

/* The escaping part of a string that has something to escape. */
static void escaped_slow(struct jw *w, const unsigned char *p)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *run = p;

    jw_raw(w, "\"", 1);
    for (; *p; p++) {
        char e[6] = {'\\', 'u', '0', '0', 0, 0};
        if (plain[*p])
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

/* How many bytes p starts with that need no escape. */
static size_t plain_len(const unsigned char *p)
{
    size_t n = 0;

    while (plain[p[n]])
        n++;
    return n;
}

/* The n bytes at p, which need no escape, as a JSON string after the
 * comma due, then `tail` (':' after a key, 0 after a value): one write. */
static inline void plain_put(struct jw *w, const char *p, size_t n, char tail)
{
    char *o;

    if (!(o = room(w, n + 4)))
        return;
    if (w->need_comma)
        *o++ = ',';
    w->need_comma = 0;
    *o++ = '"';
    memcpy(o, p, n);
    o += n;
    *o++ = '"';
    if (tail)
        *o++ = tail;
    *o = 0;
    w->n = (size_t)(o - w->buf);
}

/* s as a JSON string value after the comma due. The common case,
 * nothing to escape, is one scan and one copy. */
static void string_put(struct jw *w, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = plain_len(p);

    if (!p[n]) {
        plain_put(w, (const char *)p, n, 0);
        return;
    }
    comma(w);
    escaped_slow(w, p);
}

/* A key is a name written in the code (invariant 7): copied, not
 * scanned; a build with assertions checks it needs no escape. */
void jw_key(struct jw *w, const char *key)
{
    size_t n = strlen(key);

    assert(plain_len((const unsigned char *)key) == n);
    plain_put(w, key, n, ':');
}

void jw_str(struct jw *w, const char *key, const char *s)
{
    if (key)
        jw_key(w, key);
    string_put(w, s);
    w->need_comma = 1;
}

/* A value's n bytes of text, written as they are, after its key (or the
 * comma due, in an array). */
static inline void value_raw(struct jw *w, const char *key, const char *text, size_t n)
{
    if (key)
        jw_key(w, key);
    else
        comma(w);
    jw_raw(w, text, n);
    w->need_comma = 1;
}

void jw_int(struct jw *w, const char *key, int64_t v)
{
    char buf[32];
    size_t n = decimal_i64(buf, v);

    value_raw(w, key, buf, n);
}

void jw_mib(struct jw *w, const char *key, int64_t mib)
{
    char buf[40];
    size_t n = 0;

    buf[n++] = '"';
    n += decimal_i64(buf + n, mib);
    memcpy(buf + n, "Mi\"", 3);
    n += 3;
    value_raw(w, key, buf, n);
}

void jw_milli(struct jw *w, const char *key, int64_t milli)
{
    char buf[48];
    uint64_t a = milli < 0 ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    size_t n = 0;

    if (milli < 0)
        buf[n++] = '-';
    n += decimal_u64(buf + n, a / 1000);
    buf[n++] = '.';
    put_fixed(buf + n, (int)(a % 1000), 3);
    n += 3;
    while (n > 0 && buf[n - 1] == '0')
        n--;
    if (n > 0 && buf[n - 1] == '.')
        n--;
    value_raw(w, key, buf, n);
}

void jw_bool(struct jw *w, const char *key, int v)
{
    value_raw(w, key, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(struct jw *w, const char *key)
{
    value_raw(w, key, "null", 4);
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

    *len = 0;
    if (w->failed) {
        free(w->buf);
    } else if (s) {
        *len = w->n - API_REPLY_HEAD;
        memmove(s, s + API_REPLY_HEAD, *len + 1);
    } else {
        s = calloc(1, 1); /* nothing written: "" */
    }
    memset(w, 0, sizeof(*w));
    return s;
}

void jw_reply(struct api_req *r, int status, struct jw *w)
{
    if (w->failed || !w->buf) {
        size_t len;
        char *s = jw_take(w, &len);
        if (!s) {
            api_error(r, 500, "Internal error", "out of memory");
            return;
        }
        api_reply_text(r, status, "application/json", s, len);
        free(s);
        return;
    }
    api_reply_room(r, status, "application/json", w->buf, API_REPLY_HEAD,
                   w->n - API_REPLY_HEAD);
    free(w->buf);
    memset(w, 0, sizeof(*w));
}
