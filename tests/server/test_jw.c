/*
 * test_jw.c: the JSON writer's numbers and times (api/jw.c) against what
 * snprintf writes for the same values: integers at both ends of int64,
 * thousandths with their trailing zeros trimmed, times across the years
 * the API stores (every day from 1970 past 2400); strings and keys
 * escaped where they must be; CSV fields quoted and guarded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "api.h"

static char *written(void (*put)(struct jw *, const char *, int64_t), int64_t v)
{
    struct jw j = {0};
    size_t len;

    jw_open(&j, '[');
    put(&j, NULL, v);
    jw_close(&j, ']');
    return jw_take(&j, &len);
}

static void test_ints(void **state)
{
    static const int64_t values[] = {0, 1, -1, 9, 10, 99, 100, 1234567890123LL, -42,
                                     INT64_MAX, INT64_MIN};
    char want[64];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char *got = written(jw_int, values[i]);
        snprintf(want, sizeof(want), "[%lld]", (long long)values[i]);
        assert_string_equal(got, want);
        free(got);
    }
}

static void test_millis(void **state)
{
    static const struct {
        int64_t milli;
        const char *want;
    } rows[] = {
        {0, "[0]"},       {1000, "[1]"},      {1500, "[1.5]"},   {250, "[0.25]"},
        {-250, "[-0.25]"}, {1, "[0.001]"},    {123456, "[123.456]"}, {10000, "[10]"},
        {-3000, "[-3]"},  {1010, "[1.01]"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *got = written(jw_milli, rows[i].milli);
        assert_string_equal(got, rows[i].want);
        free(got);
    }
}

static void test_times(void **state)
{
    static const int64_t values[] = {1, 999, 1000, 86399999, 951782400123LL /* 2000-02-29 */,
                                     1795392000000LL, 253402300799999LL /* 9999-12-31 */};
    char got[40], want[96];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        time_t s = (time_t)(values[i] / 1000);
        struct tm tm;
        gmtime_r(&s, &tm);
        snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(values[i] % 1000));
        api_time_text(values[i], got, sizeof(got));
        assert_string_equal(got, want);
    }
    api_time_text(951782400123LL, got, sizeof(got));
    assert_string_equal(got, "2000-02-29T00:00:00.123Z");
}

/* Every day from 1970 to past 2400 (leap years, 2100 and 2200 not, 2000
 * and 2400 leap), each at a different time of day, against gmtime_r. */
static void test_times_every_day(void **state)
{
    char got[40], want[96];
    int64_t day, ms;

    (void)state;
    for (day = 0; day < 160000; day++) {
        ms = day * 86400000 + (day * 7919 % 86400) * 1000 + day % 1000;
        time_t s = (time_t)(ms / 1000);
        struct tm tm;
        gmtime_r(&s, &tm);
        snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
        api_time_text(ms, got, sizeof(got));
        if (strcmp(got, want))
            fail_msg("%lld ms: %s, not %s", (long long)ms, got, want);
    }
}

/* Strings: escaped per RFC 8259 where they must be, copied as they are
 * otherwise, commas between members. Keys are names written in the code
 * (jw.c invariant 7), copied as they are. */
static void test_strings(void **state)
{
    static const struct {
        const char *key, *value, *want;
    } rows[] = {
        {"a", "plain", "{\"a\":\"plain\"}"},
        {"a", "", "{\"a\":\"\"}"},
        {"a", NULL, "{\"a\":\"\"}"},
        {"q", "say \"hi\"", "{\"q\":\"say \\\"hi\\\"\"}"},
        {"b", "a\\b", "{\"b\":\"a\\\\b\"}"},
        {"n", "l1\nl2\t\x01", "{\"n\":\"l1\\nl2\\u0009\\u0001\"}"},
        {"u", "gr\xc3\xbc\xc3\x9f" "e", "{\"u\":\"gr\xc3\xbc\xc3\x9f" "e\"}"},
        {"camelCase_2", "v\"", "{\"camelCase_2\":\"v\\\"\"}"},
        {"end", "\"", "{\"end\":\"\\\"\"}"},
    };
    struct jw j = {0};
    size_t i, len;
    char *got;

    (void)state;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        jw_open(&j, '{');
        jw_str(&j, rows[i].key, rows[i].value);
        jw_close(&j, '}');
        got = jw_take(&j, &len);
        assert_string_equal(got, rows[i].want);
        assert_int_equal(len, strlen(rows[i].want));
        free(got);
    }
    jw_reserve(&j, 10);
    jw_open(&j, '[');
    jw_str(&j, NULL, "x");
    jw_str(&j, NULL, "y\"");
    jw_int(&j, NULL, 3);
    jw_open(&j, '{');
    jw_key(&j, "k");
    jw_null(&j, NULL);
    jw_str(&j, "s", "t");
    jw_close(&j, '}');
    jw_close(&j, ']');
    got = jw_take(&j, &len);
    assert_string_equal(got, "[\"x\",\"y\\\"\",3,{\"k\":null,\"s\":\"t\"}]");
    free(got);
}

/* CSV fields: quoted only where they must be, or always with
 * JW_CSV_QUOTE; a text that would be a spreadsheet formula guarded. */
static void test_csv(void **state)
{
    static const struct {
        char sep;
        const char *field;
        int flags;
        const char *want;
    } cases[] = {
        {0, "team-a", 0, "team-a"},
        {',', "team-a", 0, ",team-a"},
        {',', "", 0, ","},
        {0, "a,b", 0, "\"a,b\""},
        {0, "say \"hi\"", 0, "\"say \"\"hi\"\"\""},
        {0, "two\nlines", 0, "\"two\nlines\""},
        {0, "-1", 0, "-1"},
        {0, "-1", JW_CSV_TEXT, "\"'-1\""},
        {0, "=HYPERLINK(\"x\")", JW_CSV_TEXT, "\"'=HYPERLINK(\"\"x\"\")\""},
        {0, "@sum", JW_CSV_TEXT, "\"'@sum\""},
        {0, "admin", JW_CSV_QUOTE, "\"admin\""},
        {',', "", JW_CSV_QUOTE | JW_CSV_TEXT, ",\"\""},
    };
    size_t i, len;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct jw j = {0};
        char *got;

        jw_csv(&j, cases[i].sep, cases[i].field, cases[i].flags);
        got = jw_take(&j, &len);
        assert_non_null(got);
        assert_string_equal(got, cases[i].want);
        assert_int_equal(len, strlen(cases[i].want));
        free(got);
    }
}

RUN_TESTS(
    cmocka_unit_test(test_ints),
    cmocka_unit_test(test_millis),
    cmocka_unit_test(test_times),
    cmocka_unit_test(test_times_every_day),
    cmocka_unit_test(test_strings),
    cmocka_unit_test(test_csv)
)
