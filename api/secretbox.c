/*
 * secretbox.c: AES-256-GCM sealing of secret values (see secretbox.h).
 */
#include "secretbox.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NONCE_LEN 12
#define TAG_LEN 16
#define PREFIX "1:"

int api_secretbox_create(const char *path)
{
    unsigned char k[API_SECRETBOX_KEY_LEN];
    int fd, ok;

    if (RAND_bytes(k, sizeof(k)) != 1)
        return -1;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "allotd: cannot create the secrets key %s: %s\n", path,
                strerror(errno));
        OPENSSL_cleanse(k, sizeof(k));
        return -1;
    }
    ok = fchmod(fd, 0600) == 0 && write(fd, k, sizeof(k)) == (ssize_t)sizeof(k) &&
         fsync(fd) == 0;
    OPENSSL_cleanse(k, sizeof(k));
    if (close(fd) != 0 || !ok) {
        fprintf(stderr, "allotd: cannot write the secrets key %s\n", path);
        unlink(path);
        return -1;
    }
    return 0;
}

int api_secretbox_load(const char *path, struct api_secretbox *out)
{
    unsigned char buf[API_SECRETBOX_KEY_LEN + 1];
    struct stat sb;
    ssize_t n;
    int fd;

    memset(out, 0, sizeof(*out));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 1;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        fprintf(stderr, "allotd: cannot read the secrets key %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        fprintf(stderr, "allotd: the secrets key %s must have mode 0600\n", path);
        close(fd);
        return -1;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n != API_SECRETBOX_KEY_LEN) {
        fprintf(stderr, "allotd: the secrets key %s must hold exactly %d bytes\n", path,
                API_SECRETBOX_KEY_LEN);
        OPENSSL_cleanse(buf, sizeof(buf));
        return -1;
    }
    memcpy(out->key, buf, API_SECRETBOX_KEY_LEN);
    OPENSSL_cleanse(buf, sizeof(buf));
    out->loaded = 1;
    return 0;
}

/* The associated data: the secret's id, a NUL, the key. */
static unsigned char *aad_of(const char *secret_id, const char *key, size_t *len)
{
    size_t a = strlen(secret_id), b = strlen(key);
    unsigned char *p = malloc(a + b + 1);

    if (!p)
        return NULL;
    memcpy(p, secret_id, a);
    p[a] = 0;
    memcpy(p + a + 1, key, b);
    *len = a + b + 1;
    return p;
}

static const char hexd[] = "0123456789abcdef";

static int unhex(const char *s, size_t n, unsigned char *out)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const char *h = strchr(hexd, s[2 * i]), *l = strchr(hexd, s[2 * i + 1]);
        if (!s[2 * i] || !s[2 * i + 1] || !h || !l)
            return -1;
        out[i] = (unsigned char)(((h - hexd) << 4) | (l - hexd));
    }
    return 0;
}

char *api_secretbox_seal(const struct api_secretbox *b, const char *secret_id, const char *key,
                         const char *value, size_t len)
{
    unsigned char *raw = NULL, *aad = NULL;
    size_t aad_len = 0, n = NONCE_LEN + len + TAG_LEN, i;
    char *text = NULL;
    EVP_CIPHER_CTX *ctx = NULL;
    int out_len = 0, fin = 0, ok = 0;

    if (!b->loaded || len > API_SECRET_VALUE_MAX)
        return NULL;
    raw = malloc(n);
    aad = aad_of(secret_id, key, &aad_len);
    ctx = EVP_CIPHER_CTX_new();
    if (raw && aad && ctx && RAND_bytes(raw, NONCE_LEN) == 1 &&
        EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1 &&
        EVP_EncryptInit_ex(ctx, NULL, NULL, b->key, raw) == 1 &&
        EVP_EncryptUpdate(ctx, NULL, &out_len, aad, (int)aad_len) == 1 &&
        EVP_EncryptUpdate(ctx, raw + NONCE_LEN, &out_len, (const unsigned char *)value,
                          (int)len) == 1 &&
        (size_t)out_len == len && EVP_EncryptFinal_ex(ctx, raw + NONCE_LEN + len, &fin) == 1 &&
        fin == 0 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, raw + NONCE_LEN + len) == 1)
        ok = 1;
    if (ok && (text = malloc(sizeof(PREFIX) + 2 * n))) {
        memcpy(text, PREFIX, sizeof(PREFIX) - 1);
        for (i = 0; i < n; i++) {
            text[sizeof(PREFIX) - 1 + 2 * i] = hexd[raw[i] >> 4];
            text[sizeof(PREFIX) - 1 + 2 * i + 1] = hexd[raw[i] & 15];
        }
        text[sizeof(PREFIX) - 1 + 2 * n] = 0;
    }
    EVP_CIPHER_CTX_free(ctx);
    if (raw)
        OPENSSL_cleanse(raw, n);
    free(raw);
    free(aad);
    return text;
}

int api_secretbox_open(const struct api_secretbox *b, const char *secret_id, const char *key,
                       const char *sealed, char **value)
{
    size_t hex_len, n, len, aad_len = 0;
    unsigned char *raw = NULL, *aad = NULL;
    char *out = NULL;
    EVP_CIPHER_CTX *ctx = NULL;
    int out_len = 0, fin = 0, ok = 0;

    *value = NULL;
    if (!b->loaded || !sealed || strncmp(sealed, PREFIX, sizeof(PREFIX) - 1) != 0)
        return -1;
    sealed += sizeof(PREFIX) - 1;
    hex_len = strlen(sealed);
    if (hex_len % 2 || hex_len / 2 < NONCE_LEN + TAG_LEN ||
        hex_len / 2 > NONCE_LEN + TAG_LEN + API_SECRET_VALUE_MAX)
        return -1;
    n = hex_len / 2;
    len = n - NONCE_LEN - TAG_LEN;
    raw = malloc(n);
    out = malloc(len + 1);
    aad = aad_of(secret_id, key, &aad_len);
    ctx = EVP_CIPHER_CTX_new();
    if (raw && out && aad && ctx && unhex(sealed, n, raw) == 0 &&
        EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1 &&
        EVP_DecryptInit_ex(ctx, NULL, NULL, b->key, raw) == 1 &&
        EVP_DecryptUpdate(ctx, NULL, &out_len, aad, (int)aad_len) == 1 &&
        EVP_DecryptUpdate(ctx, (unsigned char *)out, &out_len, raw + NONCE_LEN, (int)len) == 1 &&
        (size_t)out_len == len &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, raw + NONCE_LEN + len) == 1 &&
        EVP_DecryptFinal_ex(ctx, (unsigned char *)out + len, &fin) == 1 && fin == 0)
        ok = 1;
    EVP_CIPHER_CTX_free(ctx);
    free(raw);
    free(aad);
    if (!ok) {
        if (out)
            OPENSSL_cleanse(out, len + 1);
        free(out);
        return -1;
    }
    out[len] = 0;
    *value = out;
    return 0;
}

void api_secretbox_free(char *value)
{
    if (!value)
        return;
    OPENSSL_cleanse(value, strlen(value));
    free(value);
}

int api_secretbox_uuid(char out[40])
{
    unsigned char u[16];

    if (RAND_bytes(u, sizeof(u)) != 1)
        return -1;
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
    return 0;
}
