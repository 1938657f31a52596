/*
 * config.h: the client's configuration file: the server URL, who logged
 * in, the tokens and the default project.
 *
 * The file is ~/.allot/config.json unless ALLOT_CONFIG names another. It
 * is JSON with the keys url, user, accessToken, refreshToken, expiresAt
 * (seconds since the epoch) and project, written with mode 0600 by
 * replacing the whole file, so a reader never sees half of it.
 */
#ifndef ALLOT_CLI_CONFIG_H
#define ALLOT_CLI_CONFIG_H

struct cli_config {
    char *path;                /* where it was read from and is written to */
    char *url;                 /* no trailing '/' */
    char *user;
    int service_account;       /* user is a service account's client id */
    char *access_token;
    char *refresh_token;
    long long expires_at;      /* when access_token expires; 0 unknown */
    char *project;             /* the default project, or NULL */
};

/* Finds the path and reads the file; a missing file is an empty config.
 * 0 ok; 1 when the file cannot be read (the reason is printed). */
int config_load(struct cli_config *c);

/* Writes the file (creating ~/.allot with mode 0700 for the default
 * path). 0 ok; 1 with the reason printed. */
int config_save(const struct cli_config *c);

/* Replaces *field with a copy of value (NULL clears it). 0 ok, -1 no
 * memory. */
int config_set(char **field, const char *value);

/* Drops the tokens and who they belong to. */
void config_forget_login(struct cli_config *c);

void config_clear(struct cli_config *c);

#endif
