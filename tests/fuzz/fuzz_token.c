/*
 * fuzz_token.c: the bearer tokens allotd takes (api_token_check(), api/auth.c):
 * the header pin to HS256 before libjwt reads anything, libjwt's decoding
 * and signature check, and the claim checks.
 *
 * Input: one byte picks the form, then
 *   form 0  the token text itself, checked as it is (forgeries, broken
 *           base64url, oversized segments);
 *   form 1  "HEADER\nPAYLOAD": two JSON texts the target encodes and signs
 *           with the server's key, so that the claim checks (exp, nbf,
 *           iss, typ, sub, tv) see every payload a key holder could write.
 * Checked: a token accepted, as an access or a refresh token, has a
 * header whose alg is HS256 and claims that pass the rules read again
 * here with jansson: iss "allotd", typ the type asked for, sub a positive
 * decimal user id, tv positive, exp and nbf around `now` within the
 * 30-second leeway; form 0 never passes a token not signed with the key.
 */
#include "fuzz.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#define NOW_S INT64_C(1800000000)
#define LEEWAY_S 30

static const struct api_keyring key = {
    "allot-fuzz-key-0123456789abcdef-allot-fuzz-key-0123456789abcdef", 64, LEEWAY_S,
};

static size_t b64url(const unsigned char *in, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t i, o = 0;

    for (i = 0; i + 2 < n; i += 3) {
        out[o++] = abc[in[i] >> 2];
        out[o++] = abc[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
        out[o++] = abc[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
        out[o++] = abc[in[i + 2] & 63];
    }
    if (n - i == 1) {
        out[o++] = abc[in[i] >> 2];
        out[o++] = abc[(in[i] & 3) << 4];
    } else if (n - i == 2) {
        out[o++] = abc[in[i] >> 2];
        out[o++] = abc[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
        out[o++] = abc[(in[i + 1] & 15) << 2];
    }
    out[o] = 0;
    return o;
}

/* base64url(header).base64url(payload).base64url(HMAC-SHA256), malloc'd. */
static char *sign(const char *header, size_t hn, const char *payload, size_t pn)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    char *t = malloc((hn + pn) * 2 + 128);
    size_t o;

    if (!t)
        abort();
    o = b64url((const unsigned char *)header, hn, t);
    t[o++] = '.';
    o += b64url((const unsigned char *)payload, pn, t + o);
    if (!HMAC(EVP_sha256(), key.key, key.len, (const unsigned char *)t, o, mac, &mac_len))
        abort();
    t[o++] = '.';
    b64url(mac, mac_len, t + o);
    return t;
}

/* The claims of an accepted token, read again from the payload text. */
static void claims_check(const char *payload, size_t pn, int type,
                         const struct api_token_info *info)
{
    json_t *p = json_loadb(payload, pn, 0, NULL);
    const char *sub, *typ;
    json_int_t exp, nbf;
    char want[32];

    FUZZ_ASSERT(json_is_object(p));
    FUZZ_ASSERT(json_is_string(json_object_get(p, "iss")) &&
                strcmp(json_string_value(json_object_get(p, "iss")), API_ISSUER) == 0);
    typ = json_string_value(json_object_get(p, "typ"));
    FUZZ_ASSERT(typ && strcmp(typ, type == API_TOKEN_ACCESS ? "access" : "refresh") == 0);
    sub = json_string_value(json_object_get(p, "sub"));
    FUZZ_ASSERT(sub != NULL && info->user_id > 0);
    snprintf(want, sizeof(want), "%lld", (long long)info->user_id);
    FUZZ_ASSERT(strcmp(sub, want) == 0);
    FUZZ_ASSERT(json_is_integer(json_object_get(p, "tv")));
    FUZZ_ASSERT(json_integer_value(json_object_get(p, "tv")) == info->token_version);
    FUZZ_ASSERT(info->token_version > 0);
    FUZZ_ASSERT(json_is_integer(json_object_get(p, "exp")));
    exp = json_integer_value(json_object_get(p, "exp"));
    FUZZ_ASSERT(exp == info->exp_s && NOW_S <= exp + LEEWAY_S);
    nbf = json_integer_value(json_object_get(p, "nbf"));
    FUZZ_ASSERT(nbf == info->nbf_s && nbf <= NOW_S + LEEWAY_S);
    json_decref(p);
}

/* Is the token's last segment the key's HMAC of what precedes it? */
static int signed_with_key(const char *token)
{
    const char *dot = strrchr(token, '.');
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    char want[EVP_MAX_MD_SIZE * 2];

    if (!dot || !HMAC(EVP_sha256(), key.key, key.len, (const unsigned char *)token,
                      (size_t)(dot - token), mac, &mac_len))
        return 0;
    b64url(mac, mac_len, want);
    return strcmp(dot + 1, want) == 0;
}

static void header_check(const char *header, size_t hn)
{
    json_t *h = json_loadb(header, hn, 0, NULL);

    FUZZ_ASSERT(json_is_string(json_object_get(h, "alg")));
    FUZZ_ASSERT(strcmp(json_string_value(json_object_get(h, "alg")), "HS256") == 0);
    json_decref(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_token_info info;
    const char *text, *nl;
    char *token;
    int type;

    if (size < 1 || size > 2 * API_TOKEN_MAX)
        return 0;
    text = (const char *)data + 1;
    if (data[0] % 2 == 0) {
        token = fuzz_text(data + 1, size - 1);
        for (type = API_TOKEN_ACCESS; type <= API_TOKEN_REFRESH; type++)
            FUZZ_ASSERT(api_token_check(&key, token, type, NOW_S, &info) != 0 ||
                        (strlen(token) <= API_TOKEN_MAX && signed_with_key(token)));
        free(token);
        return 0;
    }
    nl = memchr(text, '\n', size - 1);
    if (!nl)
        return 0;
    token = sign(text, (size_t)(nl - text), nl + 1, size - 1 - (size_t)(nl - text) - 1);
    for (type = API_TOKEN_ACCESS; type <= API_TOKEN_REFRESH; type++) {
        memset(&info, 0, sizeof(info));
        if (api_token_check(&key, token, type, NOW_S, &info) != 0)
            continue;
        FUZZ_ASSERT(strlen(token) <= API_TOKEN_MAX);
        header_check(text, (size_t)(nl - text));
        claims_check(nl + 1, size - 1 - (size_t)(nl - text) - 1, type, &info);
    }
    free(token);
    return 0;
}
