/*
 * test_secretbox.c: the sealing of secret values (api/secretbox.c): a
 * value opens to itself under the key, secret id and key it was sealed
 * for; a changed byte anywhere (nonce, ciphertext, tag), another key file,
 * another secret or another key refuses to open; two seals of one value
 * differ (a nonce each); the key file is made with mode 0600 and a key
 * file readable by others, of the wrong length or missing is told apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "secretbox.h"

static char dir[] = "/tmp/allot-secretbox-XXXXXX";

static void key_at(const char *name, struct api_secretbox *b)
{
    char path[128];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    unlink(path);
    assert_int_equal(api_secretbox_create(path), 0);
    assert_int_equal(api_secretbox_load(path, b), 0);
    assert_int_equal(b->loaded, 1);
}

static void test_round_trip(void **state)
{
    struct api_secretbox b;
    const char *values[] = {"s3cr3t-value", "", "line\nbreak and unicode \xc3\xa9", NULL};
    char *sealed, *again, *out;
    int i;

    (void)state;
    key_at("a.key", &b);
    for (i = 0; values[i]; i++) {
        sealed = api_secretbox_seal(&b, "id-1", "PASSWORD", values[i], strlen(values[i]));
        assert_non_null(sealed);
        assert_null(strstr(sealed, values[i][0] ? values[i] : "\x01"));
        assert_int_equal(api_secretbox_open(&b, "id-1", "PASSWORD", sealed, &out), 0);
        assert_string_equal(out, values[i]);
        api_secretbox_free(out);
        again = api_secretbox_seal(&b, "id-1", "PASSWORD", values[i], strlen(values[i]));
        assert_non_null(again);
        assert_string_not_equal(sealed, again);
        free(again);
        free(sealed);
    }
}

static void test_tamper(void **state)
{
    struct api_secretbox b;
    char *sealed, *out = NULL;
    size_t i, n;

    (void)state;
    key_at("b.key", &b);
    sealed = api_secretbox_seal(&b, "id-1", "K", "hello world", 11);
    assert_non_null(sealed);
    n = strlen(sealed);
    for (i = 2; i < n; i++) {   /* every hex digit: nonce, ciphertext, tag */
        char saved = sealed[i];
        sealed[i] = saved == '0' ? '1' : '0';
        assert_int_equal(api_secretbox_open(&b, "id-1", "K", sealed, &out), -1);
        assert_null(out);
        sealed[i] = saved;
    }
    sealed[n - 2] = 0;   /* a shorter text */
    assert_int_equal(api_secretbox_open(&b, "id-1", "K", sealed, &out), -1);
    assert_int_equal(api_secretbox_open(&b, "id-1", "K", "2:00", &out), -1);
    assert_int_equal(api_secretbox_open(&b, "id-1", "K", "1:zz", &out), -1);
    assert_int_equal(api_secretbox_open(&b, "id-1", "K", NULL, &out), -1);
    free(sealed);
}

static void test_wrong_key_or_place(void **state)
{
    struct api_secretbox a, b;
    char *sealed, *out = NULL;

    (void)state;
    key_at("c.key", &a);
    key_at("d.key", &b);
    assert_memory_not_equal(a.key, b.key, sizeof(a.key));
    sealed = api_secretbox_seal(&a, "id-1", "K", "value", 5);
    assert_non_null(sealed);
    assert_int_equal(api_secretbox_open(&b, "id-1", "K", sealed, &out), -1);
    assert_int_equal(api_secretbox_open(&a, "id-2", "K", sealed, &out), -1);
    assert_int_equal(api_secretbox_open(&a, "id-1", "K2", sealed, &out), -1);
    /* the associated data is not a plain concatenation */
    assert_int_equal(api_secretbox_open(&a, "id-1K", "", sealed, &out), -1);
    assert_null(out);
    assert_int_equal(api_secretbox_open(&a, "id-1", "K", sealed, &out), 0);
    api_secretbox_free(out);
    b.loaded = 0;
    assert_null(api_secretbox_seal(&b, "id-1", "K", "value", 5));
    free(sealed);
}

static void test_key_file(void **state)
{
    struct api_secretbox b;
    struct stat sb;
    char path[128];
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "%s/e.key", dir);
    assert_int_equal(api_secretbox_load(path, &b), 1);
    assert_int_equal(b.loaded, 0);
    assert_int_equal(api_secretbox_create(path), 0);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(sb.st_size, API_SECRETBOX_KEY_LEN);
    assert_int_equal(api_secretbox_create(path), -1);   /* never overwritten */
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(api_secretbox_load(path, &b), -1);
    assert_int_equal(chmod(path, 0600), 0);
    f = fopen(path, "a");
    assert_non_null(f);
    fputc('x', f);
    fclose(f);
    assert_int_equal(api_secretbox_load(path, &b), -1);
    assert_int_equal(b.loaded, 0);
}

static void test_uuid(void **state)
{
    char a[40], b[40];

    (void)state;
    assert_int_equal(api_secretbox_uuid(a), 0);
    assert_int_equal(api_secretbox_uuid(b), 0);
    assert_int_equal(strlen(a), 36);
    assert_string_not_equal(a, b);
    assert_int_equal(a[14], '4');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_tamper),
        cmocka_unit_test(test_wrong_key_or_place),
        cmocka_unit_test(test_key_file),
        cmocka_unit_test(test_uuid),
    };
    int rc;

    if (!mkdtemp(dir))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        char cmd[96];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", dir);
    }
    return rc;
}
