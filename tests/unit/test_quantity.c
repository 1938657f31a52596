/*
 * test_quantity.c: the memory quantity parser (common/quantity.c), one
 * table of texts and what each reads as: MiB rounded up, or refused.
 * The rows marked "fuzz" were found by tests/fuzz/fuzz_quantity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "quantity.h"

static const struct {
    const char *text;
    int rc;
    int64_t mib;
} cases[] = {
    {"0", 0, 0},
    {"1", 0, 1},                     /* one byte: rounded up to 1 MiB */
    {"1048576", 0, 1},
    {"1048577", 0, 2},
    {"512Mi", 0, 512},
    {"1Gi", 0, 1024},
    {"1.5Gi", 0, 1536},
    {"1G", 0, 954},
    {"1k", 0, 1},
    {"1e6", 0, 1},
    {"1E6", 0, 1},
    {"1e+9", 0, 954},
    {"2E", -1, 0},                   /* over 1 EiB */
    {"1E", 0, 953674316407},         /* fuzz: "E" the exa suffix, not an empty exponent */
    {"0Ei", 0, 0},                   /* fuzz: "Ei" was read as an exponent and refused */
    {"1Ei", 0, INT64_C(1) << 40},    /* fuzz */
    {"1Pi", 0, INT64_C(1) << 30},
    {"1.5Ei", -1, 0},                /* over 1 EiB */
    {"2Ei", -1, 0},
    {"1e", -1, 0},                   /* "e" is no suffix */
    {"1E+", -1, 0},
    {"1e-3", -1, 0},
    {"1e31", -1, 0},
    {"1e100", -1, 0},
    {"", -1, 0},
    {"nan", -1, 0},
    {"inf", -1, 0},
    {"-1", -1, 0},
    {"+1", -1, 0},
    {" 1", -1, 0},
    {"1 ", -1, 0},
    {"0x10", -1, 0},
    {"1.", -1, 0},
    {".5", -1, 0},
    {"1Gib", -1, 0},
    {"1ki", -1, 0},
    {"1234567890123456789012345678901", -1, 0}, /* 31 digits */
};

static void test_table(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t mib = -7;
        int rc = quantity_mib(cases[i].text, &mib);
        if (rc != cases[i].rc || (rc == 0 && mib != cases[i].mib))
            fail_msg("\"%s\": rc %d, %lld MiB; want rc %d, %lld MiB", cases[i].text, rc,
                     (long long)mib, cases[i].rc, (long long)cases[i].mib);
        if (rc != 0 && mib != -7)
            fail_msg("\"%s\": refused but wrote %lld", cases[i].text, (long long)mib);
    }
}

RUN_TESTS(
    cmocka_unit_test(test_table)
)
