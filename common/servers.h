/*
 * servers.h: a list of server URLs, "URL1,URL2,...", as the CLI's config
 * and allot-agent's --server take it: replicas of allotd, tried in turn.
 *
 * A client starts at the first, keeps to the one that answers, and moves
 * to the next only when one cannot be reached (no connection) or answers
 * 503 (not serving now): a request that reached a server and got any
 * other answer is never sent twice.
 */
#ifndef ALLOT_SERVERS_H
#define ALLOT_SERVERS_H

#include <stddef.h>

#define SERVERS_MAX 8
#define SERVER_URL_MAX 512

struct servers {
    char url[SERVERS_MAX][SERVER_URL_MAX];   /* each without a trailing '/' */
    int n;
    int cur;                                 /* the one to try first */
};

/* Splits list at commas (spaces around an entry are dropped, and any
 * trailing '/'). 0, or -1 with the end of a sentence in err, to follow
 * the option's name ("must start with http:// or https://: 'x'"): an
 * empty list or entry, more than SERVERS_MAX, one too long, or one not
 * starting with http:// or https:// and a host after it. */
int servers_parse(const char *list, struct servers *s, char *err, size_t err_len);

#endif
