/*
 * fuzz_base64.c: base64 and base64url decoding (common/base64.c), which
 * reads bearer tokens and uploaded logos, against OpenSSL's decoder.
 *
 * Input: one byte picks the alphabet (even: base64, odd: base64url), the
 * rest is the text, NULs included. Checked: a text of the alphabet's 64
 * characters alone decodes to what EVP_DecodeBlock() gives for it (in
 * base64's letters, padded to a whole quantum, the padding's bytes cut);
 * any other text is refused with -1; a cap one short of the result is
 * refused with -2, in a buffer of that size (ASan sees a byte past it).
 */
#include "fuzz.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"

static int in_alphabet(unsigned char c, enum base64_alphabet abc)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
        return 1;
    return abc == BASE64_URL ? c == '-' || c == '_' : c == '+' || c == '/';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum base64_alphabet abc;
    const char *s;
    size_t n, i, padded;
    unsigned char *got, *want;
    char *std;
    int valid = 1;
    long rc, ref;

    if (size < 1)
        return 0;
    abc = data[0] % 2 ? BASE64_URL : BASE64_STD;
    s = (const char *)data + 1;
    n = size - 1;
    got = malloc(n + 1);
    want = malloc(n + 4);
    std = malloc(n + 4);
    FUZZ_ASSERT(got && want && std);
    for (i = 0; i < n; i++)
        valid &= in_alphabet((unsigned char)s[i], abc);
    rc = base64_decode(s, n, abc, got, n);
    if (!valid) {
        FUZZ_ASSERT(rc == -1);
    } else {
        FUZZ_ASSERT(rc == (long)(n * 6 / 8));
        for (i = 0; i < n; i++)
            std[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
        for (padded = n; padded % 4; padded++)   /* a lone last character: "xA==" */
            std[padded] = padded == n && n % 4 == 1 ? 'A' : '=';
        ref = padded ? EVP_DecodeBlock(want, (const unsigned char *)std, (int)padded) : 0;
        FUZZ_ASSERT(ref >= rc);
        FUZZ_ASSERT(memcmp(got, want, (size_t)rc) == 0);
        if (rc > 0) {
            unsigned char *short_out = malloc((size_t)rc - 1 + !(rc - 1));
            FUZZ_ASSERT(short_out);
            FUZZ_ASSERT(base64_decode(s, n, abc, short_out, (size_t)rc - 1) == -2);
            free(short_out);
        }
    }
    free(got);
    free(want);
    free(std);
    return 0;
}
