/*
 * sha256.c: SHA-256 of agent tokens' secrets, in hex, with OpenSSL's
 * libcrypto (already loaded by libjwt).
 */
#include "agent_int.h"

#include <openssl/evp.h>
#include <stdio.h>

void api_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0, i;

    out[0] = '\0';
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
        return;
    for (i = 0; i < len; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}
