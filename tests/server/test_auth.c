/*
 * test_auth.c: token verification refuses every forged or stale token
 * (alg none, HS384/HS512, wrong key, expired, not yet valid, wrong issuer,
 * wrong type, tampered, oversized) and accepts a good one; the leeway on
 * exp and nbf is the keyring's (allotd's --token-leeway); secrets hash
 * and check; the principal cache answers only while the token is valid
 * and nothing was invalidated since it was stored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jwt.h>

#include "api.h"

static struct api_keyring key = {.len = 32, .leeway_s = 30}; /* allotd's default */
static const int64_t now = 1800000000;

/* Signs a token with the given algorithm and claims. */
static char *forge_sub(jwt_alg_t alg, const unsigned char *k, int klen, const char *iss,
                       const char *typ, long exp, long nbf, const char *sub)
{
    jwt_t *jwt = NULL;
    char *s;

    assert_int_equal(jwt_new(&jwt), 0);
    jwt_add_grant(jwt, "iss", iss);
    jwt_add_grant(jwt, "sub", sub);
    jwt_add_grant(jwt, "typ", typ);
    jwt_add_grant_int(jwt, "tv", 3);
    if (exp)
        jwt_add_grant_int(jwt, "exp", exp);
    jwt_add_grant_int(jwt, "nbf", nbf);
    assert_int_equal(jwt_set_alg(jwt, alg, k, klen), 0);
    s = jwt_encode_str(jwt);
    jwt_free(jwt);
    return s;
}

static char *forge(jwt_alg_t alg, const unsigned char *k, int klen, const char *iss,
                   const char *typ, long exp, long nbf)
{
    return forge_sub(alg, k, klen, iss, typ, exp, nbf, "7");
}

/* *u: alice, user 42, at token version 5. */
static void alice(struct db_user *u)
{
    memset(u, 0, sizeof(*u));
    u->id = 42;
    u->token_version = 5;
    strcpy(u->login, "alice");
}

static int verify(const char *tok)
{
    int64_t uid = 0, tv = 0;

    return api_token_verify(&key, tok, API_TOKEN_ACCESS, now, &uid, &tv);
}

static void test_issue_and_verify(void **state)
{
    struct db_user u;
    char *tok = NULL;
    int64_t uid = 0, tv = 0;

    (void)state;
    alice(&u);
    assert_int_equal(api_token_issue(&key, &u, API_TOKEN_ACCESS, 3600, now, &tok), 0);
    assert_int_equal(api_token_verify(&key, tok, API_TOKEN_ACCESS, now + 10, &uid, &tv), 0);
    assert_int_equal(uid, 42);
    assert_int_equal(tv, 5);
    /* an access token is not a refresh token */
    assert_int_not_equal(api_token_verify(&key, tok, API_TOKEN_REFRESH, now, &uid, &tv), 0);
    /* expired an hour later (plus leeway) */
    assert_int_not_equal(api_token_verify(&key, tok, API_TOKEN_ACCESS, now + 3700, &uid, &tv), 0);
    /* tampered payload */
    tok[strlen(tok) / 2] ^= 1;
    assert_int_not_equal(verify(tok), 0);
    free(tok);
}

/* A refresh token names its family and generation; one without them (as
 * signed before rotation) is refused, and api_token_issue() makes none. */
static void test_refresh_family(void **state)
{
    static const char fam[] = "0d2a6c9e-4f1b-4c55-9a8e-2b7f3c1d5e6f";
    struct api_token_info info;
    struct db_user u;
    char *tok = NULL, *bare;

    (void)state;
    alice(&u);
    assert_int_not_equal(api_token_issue(&key, &u, API_TOKEN_REFRESH, 3600, now, &tok), 0);
    assert_null(tok);
    assert_int_equal(api_token_issue_refresh(&key, &u, 3600, now, fam, 3, &tok), 0);
    assert_int_equal(api_token_check(&key, tok, API_TOKEN_REFRESH, now, &info), 0);
    assert_string_equal(info.family, fam);
    assert_int_equal(info.gen, 3);
    assert_int_equal(info.user_id, 42);
    assert_int_not_equal(api_token_check(&key, tok, API_TOKEN_ACCESS, now, &info), 0);
    free(tok);
    /* a refresh token without fam and gen, correctly signed */
    bare = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "refresh", (long)now + 3600,
                 (long)now);
    assert_non_null(bare);
    assert_int_not_equal(api_token_check(&key, bare, API_TOKEN_REFRESH, now, &info), 0);
    free(bare);
}

static void test_forgeries(void **state)
{
    unsigned char other[32];
    char *t;

    (void)state;
    memset(other, 0x5a, sizeof(other));
    t = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "access", now + 60, now);
    assert_int_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_HS512, key.key, key.len, API_ISSUER, "access", now + 60, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_HS384, key.key, key.len, API_ISSUER, "access", now + 60, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_NONE, NULL, 0, API_ISSUER, "access", now + 60, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_HS256, other, 32, API_ISSUER, "access", now + 60, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "access", 1, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "access", 0, now);
    assert_int_not_equal(verify(t), 0); /* no exp */
    free(t);
    t = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "access", now + 600, now + 300);
    assert_int_not_equal(verify(t), 0); /* nbf in the future */
    free(t);
    t = forge(JWT_ALG_HS256, key.key, key.len, "someone-else", "access", now + 60, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
    t = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "refresh", now + 60, now);
    assert_int_not_equal(verify(t), 0);
    free(t);
}

/* The user id is the sub claim written as allotd writes it: a positive
 * decimal number without sign, spaces or leading zeros ("02" was user 2;
 * found by tests/fuzz/fuzz_token). */
/* A token is good from its nbf less the leeway to its exp plus the
 * leeway, to the second, whatever the leeway (0 included). */
static void test_leeway(void **state)
{
    static const struct {
        int leeway_s;
        long exp, nbf; /* from now */
        int ok;
    } cases[] = {
        {30, -30, -90, 1}, {30, -31, -90, 0}, {30, 60, 30, 1}, {30, 60, 31, 0},
        {1, -1, -60, 1},   {1, -2, -60, 0},   {1, 60, 1, 1},   {1, 60, 2, 0},
        {0, 0, 0, 1},      {0, -1, -60, 0},   {0, 60, 1, 0},   {300, -300, -400, 1},
    };
    struct api_keyring k = key;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *t = forge(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "access", now + cases[i].exp,
                        now + cases[i].nbf);
        int64_t uid = 0, tv = 0;

        k.leeway_s = cases[i].leeway_s;
        if ((api_token_verify(&k, t, API_TOKEN_ACCESS, now, &uid, &tv) == 0) != cases[i].ok)
            fail_msg("leeway %d, exp %+ld, nbf %+ld: wanted %s", cases[i].leeway_s, cases[i].exp,
                     cases[i].nbf, cases[i].ok ? "good" : "refused");
        free(t);
    }
}

static void test_sub_canonical(void **state)
{
    static const struct { const char *sub; int ok; } cases[] = {
        {"2", 1}, {"1234567", 1}, {"02", 0}, {"+2", 0}, {" 2", 0}, {"2 ", 0}, {"0", 0},
        {"-1", 0}, {"2x", 0}, {"", 0}, {"99999999999999999999", 0},
    };
    int64_t uid, tv;
    size_t i;
    char *t;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        t = forge_sub(JWT_ALG_HS256, key.key, key.len, API_ISSUER, "access", now + 60, now,
                      cases[i].sub);
        uid = 0;
        if ((api_token_verify(&key, t, API_TOKEN_ACCESS, now, &uid, &tv) == 0) != cases[i].ok)
            fail_msg("sub \"%s\": wanted %s", cases[i].sub, cases[i].ok ? "accepted" : "refused");
        if (cases[i].ok)
            assert_int_equal(uid, strtoll(cases[i].sub, NULL, 10));
        free(t);
    }
}

static void test_oversized_and_garbage(void **state)
{
    char *big = malloc(API_TOKEN_MAX + 2);

    (void)state;
    memset(big, 'a', API_TOKEN_MAX + 1);
    big[API_TOKEN_MAX + 1] = 0;
    assert_int_not_equal(verify(big), 0);
    free(big);
    assert_int_not_equal(verify(""), 0);
    assert_int_not_equal(verify("a.b.c"), 0);
    assert_int_not_equal(verify("...."), 0);
}

static void test_secret_hash(void **state)
{
    /* the cost, and the parameters crypt(3) writes for it: libxcrypt's
     * default (5), allotd's too, and the cheapest */
    static const struct {
        int cost;
        const char *prefix;
    } rows[] = {
        {5, "$y$j9T$"},
        {1, "$y$j75$"},
    };
    char hash[256], other[256];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_int_equal(api_secret_hash("correct horse", rows[i].cost, hash, sizeof(hash)), 0);
        assert_int_equal(strncmp(hash, rows[i].prefix, strlen(rows[i].prefix)), 0);
        assert_true(api_secret_check("correct horse", hash));
        assert_false(api_secret_check("correct hors", hash));
        /* a fresh salt each time */
        assert_int_equal(api_secret_hash("correct horse", rows[i].cost, other, sizeof(other)), 0);
        assert_string_not_equal(hash, other);
        /* an unknown name's check runs at that cost */
        assert_int_equal(api_secret_check_none("correct horse", rows[i].cost), 0);
    }
    assert_false(api_secret_check("correct horse", "plain"));
    /* a setting alone (what a check of an unknown name runs) matches
     * nothing; past yescrypt's costs none is made */
    assert_false(api_secret_check("correct horse", "$y$j75$abcdefghijklmnop"));
    assert_int_equal(api_secret_check_none("correct horse", 12), -1);
}

static void test_principal_cache(void **state)
{
    struct api_pcache *pc = api_pcache_new();
    struct api_principal p, got;
    struct db_rule rule;
    uint64_t gen;

    (void)state;
    assert_non_null(pc);
    memset(&p, 0, sizeof(p));
    memset(&rule, 0, sizeof(rule));
    p.user.id = 9;
    strcpy(p.user.login, "carol");
    strcpy(p.user.secret_hash, "$y$secret");
    strcpy(rule.scope_type, "system");
    rule.role_id = 6;
    p.rules = &rule;
    p.n_rules = 1;
    gen = api_pcache_generation(pc);
    api_pcache_put(pc, "tok-a", now + 60, now, gen, &p);
    memset(&got, 0, sizeof(got));
    assert_int_equal(api_pcache_get(pc, "tok-a", now, &got), 0);
    assert_int_equal(got.user.id, 9);
    assert_int_equal(got.n_rules, 1);
    assert_string_equal(got.user.secret_hash, ""); /* never kept */
    api_principal_clear(&got);
    assert_int_not_equal(api_pcache_get(pc, "tok-b", now, &got), 0);
    /* good from nbf to exp, the bounds included: the caller widened them */
    assert_int_equal(api_pcache_get(pc, "tok-a", now + 60, &got), 0);
    api_principal_clear(&got);
    assert_int_not_equal(api_pcache_get(pc, "tok-a", now + 61, &got), 0); /* expired */
    api_pcache_put(pc, "tok-a", now + 60, now, gen, &p);
    assert_int_not_equal(api_pcache_get(pc, "tok-a", now - 1, &got), 0); /* not yet */
    api_pcache_put(pc, "tok-a", now + 60, now, gen, &p);
    api_pcache_invalidate(pc); /* a logout, a password change, a rule change */
    assert_int_not_equal(api_pcache_get(pc, "tok-a", now, &got), 0);
    /* stored under a generation that was already stale: never served */
    api_pcache_put(pc, "tok-c", now + 60, now, gen, &p);
    assert_int_not_equal(api_pcache_get(pc, "tok-c", now, &got), 0);
    api_pcache_free(pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_and_verify),
        cmocka_unit_test(test_refresh_family),
        cmocka_unit_test(test_forgeries),
        cmocka_unit_test(test_leeway),
        cmocka_unit_test(test_sub_canonical),
        cmocka_unit_test(test_oversized_and_garbage),
        cmocka_unit_test(test_secret_hash),
        cmocka_unit_test(test_principal_cache),
    };

    memset(key.key, 0x42, 32);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
