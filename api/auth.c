/*
 * auth.c: the signing key, secret hashing, and issuing and verifying
 * access and refresh tokens.
 *
 * Invariants:
 *   1. The key is at least 32 random bytes read from a file of mode 0600
 *      (created with getrandom() if missing); a shorter or group/world
 *      readable key refuses to start the server.
 *   2. Tokens are HS256 only. libjwt 1.10 picks the algorithm from the
 *      token header and checks no claim, so verification pins the
 *      algorithm twice (the header text before decoding, jwt_get_alg
 *      after) and checks exp (required), nbf, iss, typ and the version
 *      claim itself. An ID token (typ "id", aud "allot-id") says who
 *      signed in and is never a bearer: an access check refuses any
 *      token with an aud. The key is never NULL (libjwt skips verification
 *      for a NULL key).
 *   3. Secrets are stored only as yescrypt hashes (libcrypt), compared
 *      by crypt_r itself. A hash keeps the cost it was made with
 *      (--secret-hash-cost then); a check of an unknown name costs a
 *      hash at the cost configured now.
 *   4. A refresh token also names its sign-in's family (fam, a UUID) and
 *      its generation (gen); one without them is refused. An access token
 *      names its family too, and is good only while the family lives
 *      (http.c asks db_refresh_live). Whether that
 *      generation is still the family's current one is the database's
 *      to say (db_refresh_rotate, in h_token.c).
 */
#include "api.h"
#include "base64.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int random_bytes(void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = getrandom((char *)buf + got, n - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (errno != EINTR)
            return -1;
    }
    return 0;
}

int api_random_text(char *out, size_t len, int n)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char b[128];
    int i;

    if (n <= 0 || (size_t)n >= len || n > (int)sizeof(b))
        return -1;
    if (random_bytes(b, (size_t)n) != 0)
        return -1;
    for (i = 0; i < n; i++)
        out[i] = alphabet[b[i] % 62]; /* 256 % 62 bias is below 2%: fine for ~190 bits */
    out[n] = 0;
    return 0;
}

static int key_create(const char *path)
{
    unsigned char key[32];
    char tmp[600];
    int fd, rc = -1;

    if (random_bytes(key, sizeof(key)) != 0)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        goto out;
    if (write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) || fsync(fd) != 0) {
        close(fd);
        goto out_unlink;
    }
    close(fd);
    if (rename(tmp, path) != 0)
        goto out_unlink;
    rc = 0;
    goto out;
out_unlink:
    unlink(tmp);
out:
    memset(key, 0, sizeof(key));
    return rc;
}

int api_key_load(const char *path, struct api_keyring *out)
{
    struct stat sb;
    int fd;
    ssize_t n;

    memset(out, 0, sizeof(*out));
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT || key_create(path) != 0) {
            fprintf(stderr, "allotd: cannot create the key file %s\n", path);
            return -1;
        }
        if (stat(path, &sb) != 0)
            return -1;
    }
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        fprintf(stderr, "allotd: the key file %s must have mode 0600\n", path);
        return -1;
    }
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    n = read(fd, out->key, sizeof(out->key));
    close(fd);
    if (n < 32) {
        fprintf(stderr, "allotd: the key file %s holds fewer than 32 bytes\n", path);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    out->len = (int)n;
    return 0;
}

int api_secret_hash(const char *secret, int cost, char *out, size_t len)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    unsigned char rnd[32];
    struct crypt_data *cd;
    int rc = -1;

    if (random_bytes(rnd, sizeof(rnd)) != 0)
        return -1;
    if (!crypt_gensalt_rn("$y$", (unsigned long)cost, (const char *)rnd, sizeof(rnd), salt,
                          sizeof(salt)))
        return -1;
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return -1;
    if (crypt_r(secret, salt, cd) && cd->output[0] == '$' && strlen(cd->output) < len) {
        memcpy(out, cd->output, strlen(cd->output) + 1);
        rc = 0;
    }
    memset(cd, 0, sizeof(*cd));
    free(cd);
    return rc;
}

int api_secret_check(const char *secret, const char *hash)
{
    struct crypt_data *cd;
    size_t i, n;
    unsigned char diff = 0;
    int ok = 0;

    if (!hash || hash[0] != '$')
        return 0;
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return 0;
    if (crypt_r(secret, hash, cd) && cd->output[0] == '$') {
        n = strlen(hash);
        if (strlen(cd->output) == n) {
            for (i = 0; i < n; i++)
                diff |= (unsigned char)(cd->output[i] ^ hash[i]);
            ok = diff == 0;
        }
    }
    memset(cd, 0, sizeof(*cd));
    free(cd);
    return ok;
}

int api_secret_check_none(const char *secret, int cost)
{
    /* a setting (prefix and salt, no hash) computes the whole hash, which
     * then differs from the setting itself */
    static const char salt_bytes[16] = "allot-no-login";
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];

    if (!crypt_gensalt_rn("$y$", (unsigned long)cost, salt_bytes, sizeof(salt_bytes), setting,
                          sizeof(setting)))
        return -1;
    (void)api_secret_check(secret, setting);
    return 0;
}

/* A token of type; a refresh token names its family and generation. */
static int token_issue(const struct api_keyring *k, const struct db_user *u, int type,
                       int ttl_s, int64_t now_s, const char *family, int64_t gen, char **out)
{
    jwt_t *jwt = NULL;
    char sub[32];
    int rc = -1;

    *out = NULL;
    if (k->len < 32 || jwt_new(&jwt) != 0)
        return -1;
    snprintf(sub, sizeof(sub), "%lld", (long long)u->id);
    if (jwt_add_grant(jwt, "iss", API_ISSUER) || jwt_add_grant(jwt, "sub", sub) ||
        jwt_add_grant(jwt, "preferred_username", u->login) ||
        jwt_add_grant(jwt, "typ", type == API_TOKEN_ACCESS ? "access"
                                  : type == API_TOKEN_ID ? "id" : "refresh") ||
        jwt_add_grant_int(jwt, "tv", (long)u->token_version) ||
        jwt_add_grant_int(jwt, "iat", (long)now_s) ||
        jwt_add_grant_int(jwt, "nbf", (long)now_s) ||
        jwt_add_grant_int(jwt, "exp", (long)(now_s + ttl_s)))
        goto out_free;
    if (type == API_TOKEN_ID && jwt_add_grant(jwt, "aud", API_ID_AUDIENCE))
        goto out_free;
    if (type == API_TOKEN_ACCESS && family && jwt_add_grant(jwt, "fam", family))
        goto out_free;
    if (type == API_TOKEN_REFRESH &&
        (!family || jwt_add_grant(jwt, "fam", family) || jwt_add_grant_int(jwt, "gen", (long)gen)))
        goto out_free;
    if (jwt_set_alg(jwt, JWT_ALG_HS256, k->key, k->len) != 0)
        goto out_free;
    *out = jwt_encode_str(jwt);
    rc = *out ? 0 : -1;
out_free:
    jwt_free(jwt);
    return rc;
}

int api_token_issue(const struct api_keyring *k, const struct db_user *u, int type,
                    int ttl_s, int64_t now_s, char **out)
{
    *out = NULL;
    return type == API_TOKEN_ACCESS || type == API_TOKEN_ID
               ? token_issue(k, u, type, ttl_s, now_s, NULL, 0, out) : -1;
}

int api_token_issue_access(const struct api_keyring *k, const struct db_user *u, int ttl_s,
                           int64_t now_s, const char *family, char **out)
{
    return token_issue(k, u, API_TOKEN_ACCESS, ttl_s, now_s, family, 0, out);
}

int api_token_issue_refresh(const struct api_keyring *k, const struct db_user *u, int ttl_s,
                            int64_t now_s, const char *family, int64_t gen, char **out)
{
    return token_issue(k, u, API_TOKEN_REFRESH, ttl_s, now_s, family, gen, out);
}

/* Decodes N characters of base64url at S into OUT (CAP bytes, one kept
 * for a NUL); the number of bytes, or -1 for a character outside the
 * alphabet or a result that does not fit. */
static long b64url_decode(const char *s, size_t n, char *out, size_t cap)
{
    long o = base64_decode(s, n, BASE64_URL, (unsigned char *)out, cap - 1);

    return o < 0 ? -1 : o;
}

/* The header must say HS256 before libjwt is allowed to look at it. The
 * header segment is base64url of a small JSON object; decode and check. */
static int header_is_hs256(const char *token)
{
    const char *dot = strchr(token, '.');
    char json[256];
    size_t n;
    long o;
    int ok;
    json_t *h, *alg;

    if (!dot)
        return 0;
    n = (size_t)(dot - token);
    if (n == 0 || n > 300 || (o = b64url_decode(token, n, json, sizeof(json))) < 0)
        return 0;
    if (api_json_depth(json, (size_t)o, API_JSON_DEPTH_MAX) > API_JSON_DEPTH_MAX)
        return 0;
    h = json_loadb(json, (size_t)o, JSON_REJECT_DUPLICATES, NULL);
    alg = h ? json_object_get(h, "alg") : NULL;
    ok = json_is_string(alg) && strcmp(json_string_value(alg), "HS256") == 0;
    json_decref(h);
    return ok;
}

/* libjwt reads the payload as a C string, so bytes after a NUL in it
 * would be signed but never read: such a payload is refused. */
static int payload_is_text(const char *token)
{
    const char *start = strchr(token, '.'), *end;
    char payload[API_TOKEN_MAX];
    long o;

    if (!start || !(end = strchr(start + 1, '.')))
        return 0;
    o = b64url_decode(start + 1, (size_t)(end - start - 1), payload, sizeof(payload));
    return o > 0 && memchr(payload, 0, (size_t)o) == NULL;
}

/* A refresh token's family (a UUID as db__uuid writes it) and its
 * generation (1 or more). */
static int refresh_claims_ok(jwt_t *jwt, struct api_token_info *info)
{
    const char *fam = jwt_get_grant(jwt, "fam");
    long gen;

    if (!fam || !api_is_uuid(fam))
        return 0;
    errno = 0;
    gen = jwt_get_grant_int(jwt, "gen");
    if (errno != 0 || gen <= 0)
        return 0;
    snprintf(info->family, sizeof(info->family), "%s", fam);
    info->gen = gen;
    return 1;
}

static int claims_ok(jwt_t *jwt, int type, int64_t now_s, int leeway_s,
                     struct api_token_info *info)
{
    const char *iss, *typ, *sub;
    long exp, nbf, v;
    char *end;

    errno = 0;
    exp = jwt_get_grant_int(jwt, "exp");
    if (errno != 0 || exp <= 0 || now_s > exp + leeway_s)
        return 0;
    errno = 0;
    nbf = jwt_get_grant_int(jwt, "nbf");
    if (errno != 0 || now_s + leeway_s < nbf)
        return 0;
    iss = jwt_get_grant(jwt, "iss");
    typ = jwt_get_grant(jwt, "typ");
    sub = jwt_get_grant(jwt, "sub");
    if (!iss || strcmp(iss, API_ISSUER) != 0 || !typ || !sub)
        return 0;
    if (strcmp(typ, type == API_TOKEN_ACCESS ? "access" : type == API_TOKEN_ID ? "id" : "refresh"))
        return 0;
    if (type != API_TOKEN_ID && jwt_get_grant(jwt, "aud")) /* an ID token's, whatever its typ */
        return 0;
    errno = 0;
    v = jwt_get_grant_int(jwt, "tv");
    if (errno != 0 || v <= 0)
        return 0;
    /* the id as api_token_issue() writes it: no sign, space or leading 0 */
    if (sub[0] < '1' || sub[0] > '9')
        return 0;
    errno = 0;
    info->user_id = strtoll(sub, &end, 10);
    if (errno != 0 || end == sub || *end || info->user_id <= 0)
        return 0;
    info->token_version = v;
    info->exp_s = exp;
    info->nbf_s = nbf;
    info->family[0] = 0;
    if (type == API_TOKEN_ACCESS && jwt_get_grant(jwt, "fam")) { /* its sign-in's */
        const char *fam = jwt_get_grant(jwt, "fam");
        if (!api_is_uuid(fam))
            return 0;
        snprintf(info->family, sizeof(info->family), "%s", fam);
    }
    return type != API_TOKEN_REFRESH || refresh_claims_ok(jwt, info);
}

int api_token_verify(const struct api_keyring *k, const char *token, int type, int64_t now_s,
                     int64_t *user_id, int64_t *token_version)
{
    struct api_token_info info;
    int rc = api_token_check(k, token, type, now_s, &info);

    if (rc == 0) {
        *user_id = info.user_id;
        *token_version = info.token_version;
    }
    return rc;
}

int api_token_check(const struct api_keyring *k, const char *token, int type, int64_t now_s,
                    struct api_token_info *info)
{
    jwt_t *jwt = NULL;
    int rc = -1;

    if (!token || k->len < 32 || strlen(token) > API_TOKEN_MAX || !header_is_hs256(token) ||
        !payload_is_text(token))
        return -1;
    if (jwt_decode(&jwt, token, k->key, k->len) != 0)
        goto out;
    if (jwt_get_alg(jwt) != JWT_ALG_HS256) /* second pin: "none" and HS384/512 */
        goto out;
    if (claims_ok(jwt, type, now_s, k->leeway_s, info))
        rc = 0;
out:
    jwt_free(jwt);
    return rc;
}
