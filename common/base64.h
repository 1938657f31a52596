/*
 * base64.h: decoding base64 (RFC 4648 section 4) and base64url (section 5),
 * for the bearer tokens allotd checks, the claims the CLI shows and the
 * tenant logo an administrator uploads.
 */
#ifndef ALLOT_BASE64_H
#define ALLOT_BASE64_H

#include <stddef.h>

enum base64_alphabet { BASE64_STD, BASE64_URL };

/* Decodes the n characters at s (no padding: a caller strips it) into out,
 * cap bytes: the bytes written; -1 for a character outside the alphabet
 * (NUL included), -2 for a result longer than cap. The bits of a last
 * partial character are dropped, as RFC 4648 decoders do. */
long base64_decode(const char *s, size_t n, enum base64_alphabet abc, unsigned char *out,
                   size_t cap);

#endif /* ALLOT_BASE64_H */
