/*
 * client.h: the client's side of allotd's API: HTTP (plain TCP for
 * http://, libcurl for https://) with timeouts, bearer tokens that are
 * refreshed when they expire, JSON in and out, and error messages that
 * say what to do next.
 *
 * Every function that returns an int returns an exit status (cli.h): 0
 * ok; 1 with the reason already printed on stderr; 2 for a usage error.
 *
 * Timeouts come from the environment, in seconds: ALLOT_CONNECT_TIMEOUT
 * (default 5) and ALLOT_TIMEOUT for a whole exchange (default 30; a
 * followed log stream has none).
 */
#ifndef ALLOT_CLIENT_H
#define ALLOT_CLIENT_H

#include <jansson.h>
#include <stdio.h>

#include "config.h"

struct client;

/* An HTTP answer; body (owned) is NUL-terminated. */
struct reply {
    long status;
    char *body;
    size_t len;
};

enum client_need { CLIENT_ANONYMOUS = 0, CLIENT_LOGGED_IN = 1 };

/* Reads the configuration. With CLIENT_LOGGED_IN, a
 * config without a login is an error that says to run allot login. */
int client_open(struct client **out, int need);
void client_close(struct client *c);

struct cli_config *client_config(struct client *c);

/* method path [JSON body] -> JSON answer (NULL for an empty one). An
 * answer outside 2xx is printed as the server's error and gives 1. body
 * is borrowed; *out is the caller's. */
int client_json(struct client *c, const char *method, const char *path, json_t *body,
                json_t **out);

/* GET path and return the array under key, following `next` to the
 * last page. */
int client_list_all(struct client *c, const char *path, const char *key, json_t **out);

/* GET path; a 2xx body goes to `to` as it arrives. Other answers are left
 * in rep (status and body) for the caller, which clears it. */
int client_stream(struct client *c, const char *path, int follow, FILE *to, struct reply *rep);

/* Asks the token route for tokens with an OAuth2 form (password or
 * client_credentials grant) and keeps them in the config, unsaved. */
int client_grant(struct client *c, const char *form);

/* Prints the server's error of rep as "allot: details (status message)",
 * with what to do next; returns 1. */
int client_server_error(struct client *c, const struct reply *rep);

/* The claims of a JWT, decoded but not verified; NULL if malformed. */
json_t *client_token_claims(const char *token);

/* s with every byte outside [A-Za-z0-9._~-] percent-encoded (malloc'd). */
char *client_escape(const char *s);

void reply_clear(struct reply *rep);

#endif
