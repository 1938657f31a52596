/*
 * test_servers.c: servers_parse() (common/servers.c), the list of allotd
 * replicas that the CLI's config and allot-agent's --server take: each
 * row a list and the URLs it gives, or a word of its refusal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "servers.h"

static void test_servers_parse(void **state)
{
    static const struct {
        const char *list;
        int n;                      /* URLs given; -1: refused */
        const char *first, *last;   /* refused: a word of the sentence */
    } rows[] = {
        {"http://h:1", 1, "http://h:1", "http://h:1"},
        {"http://h:1/", 1, "http://h:1", "http://h:1"},
        {"http://a:1//, https://b:2/api/", 2, "http://a:1", "https://b:2/api"},
        {" http://a:1 ,http://b:2,http://c:3 ", 3, "http://a:1", "http://c:3"},
        {"", -1, "empty", NULL},
        {"http://a:1,", -1, "empty", NULL},
        {"http://a:1,,http://b:2", -1, "empty", NULL},
        {"ftp://a", -1, "http:// or https://", NULL},
        {"http:///", -1, "http:// or https://", NULL},
        {"https://", -1, "http:// or https://", NULL},
        {"h:1", -1, "'h:1'", NULL},
        {"http://1,http://2,http://3,http://4,http://5,http://6,http://7,http://8", 8, "http://1",
         "http://8"},
        {"http://1,http://2,http://3,http://4,http://5,http://6,http://7,http://8,http://9", -1,
         "more than 8", NULL},
    };
    struct servers s;
    char err[256];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int rc = servers_parse(rows[i].list, &s, err, sizeof(err));
        if (rows[i].n < 0) {
            if (rc != -1 || !strstr(err, rows[i].first))
                fail_msg("'%s': not refused with '%s' (%d, %s)", rows[i].list, rows[i].first, rc,
                         err);
            continue;
        }
        if (rc != 0 || s.n != rows[i].n || s.cur != 0 || strcmp(s.url[0], rows[i].first) != 0 ||
            strcmp(s.url[s.n - 1], rows[i].last) != 0)
            fail_msg("'%s': %d, %d URLs, %s .. %s", rows[i].list, rc, s.n, s.url[0],
                     s.n > 0 ? s.url[s.n - 1] : "");
    }
}

static void test_servers_too_long(void **state)
{
    char list[SERVER_URL_MAX + 16], err[256];
    struct servers s;

    (void)state;
    memset(list, 'x', sizeof(list) - 1);
    memcpy(list, "http://", 7);
    list[sizeof(list) - 1] = 0;
    assert_int_equal(servers_parse(list, &s, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "too long"));
    list[SERVER_URL_MAX - 1] = 0; /* the longest that fits */
    assert_int_equal(servers_parse(list, &s, err, sizeof(err)), 0);
    assert_int_equal((int)strlen(s.url[0]), SERVER_URL_MAX - 1);
}

RUN_TESTS(
    cmocka_unit_test(test_servers_parse),
    cmocka_unit_test(test_servers_too_long)
)
