/*
 * base64.c: base64 and base64url decoding (base64.h): six bits a
 * character, a byte out each time eight have gathered.
 */
#include "base64.h"

static int value(int c, enum base64_alphabet abc)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (abc == BASE64_URL ? '-' : '+'))
        return 62;
    if (c == (abc == BASE64_URL ? '_' : '/'))
        return 63;
    return -1;
}

long base64_decode(const char *s, size_t n, enum base64_alphabet abc, unsigned char *out,
                   size_t cap)
{
    size_t i, o = 0;
    unsigned acc = 0;
    int bits = 0;

    for (i = 0; i < n; i++) {
        int v = value((unsigned char)s[i], abc);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o == cap)
                return -2;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return (long)o;
}
