/*
 * test_cow.c: a function run in a forked child (common/cow.c), one table
 * of children and what the caller gets back: the bytes, or a failure when
 * the child fails, dies without its trailer or outlives its wait; and the
 * child's writes never reach the caller's memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmocka_main.h"

#include "clock.h"
#include "cow.h"

#define LARGE (300 * 1024)   /* past the child's buffer and the reader's first one */

static int marker = 1;   /* the child writes 2 here; the caller must still read 1 */

static int child_hello(void *arg, struct cow_out *out)
{
    (void)arg;
    marker = 2;
    return cow_put(out, "hello", 5);
}

static int child_large(void *arg, struct cow_out *out)
{
    static char big[LARGE];
    int i;

    (void)arg;
    for (i = 0; i < LARGE; i++)
        big[i] = (char)('a' + i % 26);
    return cow_put(out, big, sizeof(big));
}

static int child_fails(void *arg, struct cow_out *out)
{
    (void)arg;
    cow_put(out, "partial", 7);
    return -1;
}

static int child_dies(void *arg, struct cow_out *out)
{
    (void)arg;
    cow_put(out, "partial", 7);
    _exit(0);   /* no trailer: a child that died half way */
}

static int child_hangs(void *arg, struct cow_out *out)
{
    (void)arg;
    (void)out;
    sleep(30);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void *, struct cow_out *);
    int wait_ms;
    int rc;
    size_t len;
} cases[] = {
    {"answers", child_hello, COW_WAIT_MS, 0, 5},
    {"answers past the buffers", child_large, COW_WAIT_MS, 0, LARGE},
    {"fn fails", child_fails, COW_WAIT_MS, -1, 0},
    {"dies without its trailer", child_dies, COW_WAIT_MS, -1, 0},
    {"outlives its wait", child_hangs, 300, -1, 0},
};

static void test_cases(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cow_child c;
        char *buf = (char *)1;
        size_t len = 99;
        int64_t t0 = clock_mono_us();

        print_message("%s\n", cases[i].name);
        assert_int_equal(cow_start(cases[i].fn, NULL, &c), 0);
        assert_int_equal(c.wait_ms, COW_WAIT_MS);
        c.wait_ms = cases[i].wait_ms;
        assert_int_equal(cow_finish(&c, &buf, &len), cases[i].rc);
        assert_true(len == cases[i].len);
        if (cases[i].rc == 0) {
            assert_non_null(buf);
            assert_int_equal(buf[len], '\0');
        } else {
            assert_null(buf);
        }
        if (cases[i].fn == child_hello)
            assert_memory_equal(buf, "hello", 5);
        if (cases[i].fn == child_large)
            assert_true(buf[0] == 'a' && buf[LARGE - 1] == (char)('a' + (LARGE - 1) % 26));
        if (cases[i].fn == child_hangs) {
            /* killed at its wait, not after its sleep, and reaped */
            assert_true(clock_mono_us() - t0 < 10 * 1000 * 1000);
            assert_int_equal(waitpid((pid_t)c.pid, NULL, WNOHANG), -1);
            assert_int_equal(errno, ECHILD);
        }
        free(buf);
        assert_int_equal(marker, 1);
    }
}

/* cow_run() is the two halves in one. */
static void test_run(void **state)
{
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    assert_int_equal(cow_run(child_hello, NULL, &buf, &len), 0);
    assert_true(len == 5);
    assert_string_equal(buf, "hello");
    free(buf);
    assert_int_equal(cow_run(child_fails, NULL, &buf, &len), -1);
    assert_null(buf);
    assert_int_equal(marker, 1);
}

RUN_TESTS(
    cmocka_unit_test(test_cases),
    cmocka_unit_test(test_run)
)
