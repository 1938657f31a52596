/*
 * secretbox.h: the values of stored secrets, sealed at rest (secretbox.c).
 *
 * Each value is sealed alone with AES-256-GCM under the secrets key (32
 * random bytes in a file of mode 0600, made by allotd --init): a random
 * 96-bit nonce per value, the secret's id and the value's key as
 * associated data (a sealed value moved to another secret or key does not
 * open), a 128-bit tag. The sealed text is "1:" and the hex of nonce,
 * ciphertext and tag.
 *
 * Invariants:
 *   1. A value is never written anywhere in clear: not to the database,
 *      not to a log, not into an answer; only the agent of a pod that
 *      names it receives it (h_agent.c).
 *   2. A value that does not open (tampered, another key, another secret
 *      or key) is an error, never a guess.
 */
#ifndef ALLOT_SECRETBOX_H
#define ALLOT_SECRETBOX_H

#include <stddef.h>

#define API_SECRETBOX_KEY_LEN 32
#define API_SECRET_VALUE_MAX (64 * 1024)   /* bytes of one value */

struct api_secretbox {
    unsigned char key[API_SECRETBOX_KEY_LEN];
    int loaded;               /* 0: no key (the file was missing) */
};

/* Creates the key file with 32 random bytes, mode 0600; -1 (said on
 * stderr) if it exists or cannot be written. */
int api_secretbox_create(const char *path);
/* Loads the key: 0 loaded, 1 no such file (out->loaded 0), -1 a file that
 * is not a key (group or world readable, not 32 bytes; said on stderr). */
int api_secretbox_load(const char *path, struct api_secretbox *out);
/* The sealed text of value (len bytes) for (secret_id, key); malloc'd,
 * NULL on failure. */
char *api_secretbox_seal(const struct api_secretbox *b, const char *secret_id, const char *key,
                         const char *value, size_t len);
/* Opens sealed text: 0 and *value (malloc'd, NUL-terminated; wipe and
 * free it with api_secretbox_free()), or -1. */
int api_secretbox_open(const struct api_secretbox *b, const char *secret_id, const char *key,
                       const char *sealed, char **value);
/* Wipes a value from api_secretbox_open() and frees it; NULL is a no-op. */
void api_secretbox_free(char *value);
/* A random UUID (version 4) in its text form; 0, or -1. */
int api_secretbox_uuid(char out[40]);

#endif
