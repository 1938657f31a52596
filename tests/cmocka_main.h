/*
 * cmocka_main.h: the main() of a cmocka test program whose tests need
 * nothing prepared before they run. RUN_TESTS(entry, ...) with the
 * program's cmocka_unit_test...(...) entries defines main(): the entries
 * run as one group named "tests", with no group setup or teardown, and
 * the exit status is the count of tests that failed.
 */
#ifndef ALLOT_CMOCKA_MAIN_H
#define ALLOT_CMOCKA_MAIN_H

#define RUN_TESTS(...)                                       \
    int main(void)                                           \
    {                                                        \
        const struct CMUnitTest tests[] = {__VA_ARGS__};     \
                                                             \
        return cmocka_run_group_tests(tests, NULL, NULL);    \
    }

#endif
