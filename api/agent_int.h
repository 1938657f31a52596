/*
 * agent_int.h: what the files of allotd's agent side share and nobody else
 * uses: the hash of token secrets (sha256.c) and the pod log store
 * (h_logs.c).
 */
#ifndef ALLOT_AGENT_INT_H
#define ALLOT_AGENT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* SHA-256 of n bytes as 64 lowercase hex digits and a terminator. */
void api_sha256_hex(const void *data, size_t n, char out[65]);

/* Appends data, meant to start at byte `offset` of the log of run uid of
 * workload wl_seq; bytes the store already holds are skipped, so a retried
 * upload is harmless. *size is what the store holds afterwards. Returns 0,
 * 1 when offset is past the end (nothing written; *size says where to
 * resume), or -1 on an I/O error. */
int api_log_append(const struct api_app *app, int64_t wl_seq, const char *uid, int64_t offset,
                   const char *data, size_t len, int64_t *size);

#endif /* ALLOT_AGENT_INT_H */
