/*
 * test_base64.c: base64 and base64url decoding (common/base64.c), one
 * table of texts and what each decodes to, or why it is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "base64.h"

static const struct {
    const char *text;
    enum base64_alphabet abc;
    size_t cap;
    long rc;            /* bytes, or -1 / -2 */
    const char *bytes;
} cases[] = {
    {"", BASE64_STD, 8, 0, ""},
    {"TWFu", BASE64_STD, 8, 3, "Man"},
    {"TWE", BASE64_STD, 8, 2, "Ma"},            /* padding stripped by the caller */
    {"TQ", BASE64_STD, 8, 1, "M"},
    {"T", BASE64_STD, 8, 0, ""},                /* six bits: no byte */
    {"Pz8/", BASE64_STD, 8, 3, "???"},
    {"Pz8_", BASE64_URL, 8, 3, "???"},
    {"Pz8_", BASE64_STD, 8, -1, NULL},          /* '_' is base64url's */
    {"Pz8/", BASE64_URL, 8, -1, NULL},          /* '/' is base64's */
    {"+-", BASE64_STD, 8, -1, NULL},
    {"TW=u", BASE64_STD, 8, -1, NULL},          /* padding inside */
    {"TW u", BASE64_STD, 8, -1, NULL},
    {"TWFu", BASE64_STD, 3, 3, "Man"},          /* exactly the room */
    {"TWFu", BASE64_STD, 2, -2, NULL},
    {"eyJhbGciOiJIUzI1NiJ9", BASE64_URL, 64, 15, "{\"alg\":\"HS256\"}"},
};

static void test_decode(void **state)
{
    unsigned char out[64];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long rc = base64_decode(cases[i].text, strlen(cases[i].text), cases[i].abc, out,
                                cases[i].cap);
        assert_int_equal(rc, cases[i].rc);
        if (rc > 0)
            assert_memory_equal(out, cases[i].bytes, (size_t)rc);
    }
}

/* A NUL inside the n characters is not base64. */
static void test_nul_refused(void **state)
{
    unsigned char out[8];

    (void)state;
    assert_int_equal(base64_decode("TW\0u", 4, BASE64_STD, out, sizeof(out)), -1);
}

RUN_TESTS(
    cmocka_unit_test(test_decode),
    cmocka_unit_test(test_nul_refused)
)
