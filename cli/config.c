/*
 * config.c: reading and writing the client's configuration file
 * (config.h gives the format).
 *
 * Invariants:
 *   1. The file on disk is always whole: a save writes a temporary file
 *      beside it with mode 0600, syncs it and renames it over the old one.
 *   2. Tokens are never printed; a file that others may read is reported
 *      with the command that fixes it.
 */
#include "config.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define CONFIG_DIR ".allot"
#define CONFIG_FILE "config.json"

int config_set(char **field, const char *value)
{
    char *copy = NULL;

    if (value) {
        copy = strdup(value);
        if (!copy)
            return -1;
    }
    free(*field);
    *field = copy;
    return 0;
}

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    struct passwd *pw;

    if (h && h[0])
        return h;
    pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : NULL;
}

/* ALLOT_CONFIG, else ~/.allot/config.json. */
static char *default_path(void)
{
    const char *env = getenv("ALLOT_CONFIG"), *home;

    if (env && env[0])
        return strdup(env);
    home = home_dir();
    if (!home)
        return NULL;
    return cli_strf("%s/%s/%s", home, CONFIG_DIR, CONFIG_FILE);
}

static int take_string(json_t *o, const char *key, char **field)
{
    json_t *v = json_object_get(o, key);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    return config_set(field, json_string_value(v));
}

/* "url": one string ("URL" or "URL1,URL2"), or an array of them, joined
 * with commas (servers.h). */
static int take_urls(json_t *o, char **field)
{
    json_t *v = json_object_get(o, "url"), *e;
    char *joined = NULL, *next;
    size_t i;
    int rc = 0;

    if (!json_is_array(v))
        return take_string(o, "url", field);
    json_array_foreach(v, i, e) {
        if (!json_is_string(e)) {
            rc = -1;
            break;
        }
        next = cli_strf("%s%s%s", joined ? joined : "", joined ? "," : "", json_string_value(e));
        free(joined);
        joined = next;
        if (!joined) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && joined)
        rc = config_set(field, joined);
    free(joined);
    return rc;
}

static int from_json(json_t *o, struct cli_config *c)
{
    json_t *exp = json_object_get(o, "expiresAt"), *sa = json_object_get(o, "serviceAccount");

    if (!json_is_object(o) || (sa && !json_is_boolean(sa)))
        return -1;
    c->service_account = json_is_true(sa);
    if (take_urls(o, &c->url) || take_string(o, "user", &c->user) ||
        take_string(o, "accessToken", &c->access_token) ||
        take_string(o, "refreshToken", &c->refresh_token) ||
        take_string(o, "project", &c->project))
        return -1;
    if (exp && !json_is_integer(exp))
        return -1;
    c->expires_at = exp ? (long long)json_integer_value(exp) : 0;
    return 0;
}

static void warn_if_open(const char *path)
{
    struct stat st;

    if (stat(path, &st) == 0 && (st.st_mode & 077))
        fprintf(stderr, "allot: warning: %s may be read by others (it holds your tokens): "
                        "run chmod 600 %s\n", path, path);
}

int config_load(struct cli_config *c)
{
    json_error_t err;
    json_t *o;
    int rc = CLI_OK;

    memset(c, 0, sizeof(*c));
    c->path = default_path();
    if (!c->path)
        return cli_fail("cannot find the home directory: set ALLOT_CONFIG to a file path");
    if (access(c->path, F_OK) != 0 && errno == ENOENT)
        return CLI_OK;
    o = json_load_file(c->path, JSON_REJECT_DUPLICATES, &err);
    if (!o)
        return cli_fail("%s: %s: fix or remove it, then run allot login", c->path, err.text);
    if (from_json(o, c) != 0)
        rc = cli_fail("%s: not an allot configuration: fix or remove it, then run allot login",
                      c->path);
    else
        warn_if_open(c->path);
    json_decref(o);
    return rc;
}

static json_t *to_json(const struct cli_config *c)
{
    json_t *o = json_object();

    if (!o)
        return NULL;
    if (c->url)
        json_object_set_new(o, "url", json_string(c->url));
    if (c->user)
        json_object_set_new(o, "user", json_string(c->user));
    if (c->service_account)
        json_object_set_new(o, "serviceAccount", json_true());
    if (c->access_token)
        json_object_set_new(o, "accessToken", json_string(c->access_token));
    if (c->refresh_token)
        json_object_set_new(o, "refreshToken", json_string(c->refresh_token));
    if (c->expires_at)
        json_object_set_new(o, "expiresAt", json_integer((json_int_t)c->expires_at));
    if (c->project)
        json_object_set_new(o, "project", json_string(c->project));
    return o;
}

/* For the default path, ~/.allot must exist (mode 0700). */
static int make_dir(const char *path)
{
    const char *env = getenv("ALLOT_CONFIG");
    char *dir, *slash;
    int rc = 0;

    if (env && env[0])
        return 0;
    dir = strdup(path);
    if (!dir)
        return -1;
    slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            rc = -1;
    }
    free(dir);
    return rc;
}

/* Writes text to a new file tmp with mode 0600; 0 ok. */
static int write_file(const char *tmp, const char *text)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok;

    if (fd < 0)
        return -1;
    ok = fchmod(fd, 0600) == 0 && fio_write(fd, text, strlen(text)) == 0 &&
         fio_write(fd, "\n", 1) == 0 && fsync(fd) == 0;
    if (close(fd) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

int config_save(const struct cli_config *c)
{
    json_t *o = to_json(c);
    char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
    char *tmp = cli_strf("%s.tmp.%ld", c->path, (long)getpid());
    int rc = CLI_FAIL;

    if (!text || !tmp)
        cli_fail("out of memory");
    else if (make_dir(c->path) != 0)
        cli_fail("cannot create the directory of %s: %s", c->path, strerror(errno));
    else if (write_file(tmp, text) != 0 || rename(tmp, c->path) != 0) {
        cli_fail("cannot write %s: %s", c->path, strerror(errno));
        unlink(tmp);
    } else
        rc = CLI_OK;
    free(tmp);
    free(text);
    json_decref(o);
    return rc;
}

void config_forget_login(struct cli_config *c)
{
    config_set(&c->user, NULL);
    c->service_account = 0;
    config_set(&c->access_token, NULL);
    config_set(&c->refresh_token, NULL);
    c->expires_at = 0;
}

void config_clear(struct cli_config *c)
{
    config_forget_login(c);
    free(c->path);
    free(c->url);
    free(c->project);
    memset(c, 0, sizeof(*c));
}
