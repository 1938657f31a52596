/*
 * fuzz.h: what the libFuzzer targets of tests/fuzz share.
 *
 * The request parsers answer a bad input themselves, through civetweb's
 * mg_write() on the request's connection. fuzz_reply.c defines mg_write()
 * and mg_get_response_code_text() in each target, so an answer lands in a
 * buffer instead of a socket, and fuzz_reply_check() holds every answer to
 * the API's rule for bad input: one reply, its Content-Length the body's
 * length, and for a 4xx or 5xx a JSON object {code, message, details}
 * whose code is the status sent.
 */
#ifndef ALLOT_FUZZ_H
#define ALLOT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Forgets the last reply; call before each request. */
void fuzz_reply_reset(void);
/* Aborts unless exactly one reply was sent for r and it follows the rule
 * above; want_status 0 takes any status, else it must be that one. */
void fuzz_reply_check(const struct api_req *r, int want_status);
/* The body of the last reply (NUL-terminated; "" if none). */
const char *fuzz_reply_body(void);
/* Aborts unless nothing was sent (the parser accepted the input). */
void fuzz_reply_none(const struct api_req *r);
/* data[0..size) as a malloc'd NUL-terminated string (embedded NULs kept). */
char *fuzz_text(const uint8_t *data, size_t size);

/* A new database in a temporary folder named after tag, holding a node
 * pool per name in pools (labelled pool=<name>); closed and removed, with
 * its folder, when the target exits. */
struct db *fuzz_db_open(const char *tag, const char *const *pools, size_t n_pools);

/* Aborts with a message naming the failed condition. */
#define FUZZ_ASSERT(cond) \
    ((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond))
void fuzz_fail(const char *file, int line, const char *what);

#endif /* ALLOT_FUZZ_H */
