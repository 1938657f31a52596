/*
 * cmd_auth.c: `allot login`, `allot logout` and `allot whoami`.
 *
 * login trades a password (user) or a client secret (service account)
 * for a token pair on POST /api/v2/token and keeps it in the config.
 * Secrets come from standard input (--password-stdin,
 * --client-secret-stdin) or, on a terminal, from a prompt that does not
 * echo; they are never taken from the command line, where ps would show
 * them, and are wiped from memory once sent.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "allot_version.h"
#include "cli.h"
#include "client.h"
#include "opts.h"
#include "servers.h"

#define SECRET_MAX 1024

enum { O_URL = 1, O_USER, O_PASSWORD_STDIN, O_CLIENT_ID, O_SECRET_STDIN, O_REFUSED };

/* Secrets on the command line, as runai takes them (`runai login user -u
 * USER -p PASS`): refused with the flag that reads them instead. Their
 * option ids are O_REFUSED + the row. */
static const struct {
    const char *lng;
    char shrt;
    const char *instead;
} refused_secrets[] = {
    {"password", 'p', "--password-stdin (echo \"$PASSWORD\" | allot login --user USER "
                      "--password-stdin), or no flag to be asked on the terminal"},
    {"client-secret", 0, "--client-secret-stdin"},
    {"secret", 0, "--client-secret-stdin"},
};

#define N_REFUSED ((int)(sizeof(refused_secrets) / sizeof(refused_secrets[0])))

static const struct opt_spec login_base_opts[] = {
    {"url", 0, OPT_VALUE, O_URL}, {"server", 0, OPT_VALUE, O_URL},
    {"user", 'u', OPT_VALUE, O_USER}, {"password-stdin", 0, OPT_FLAG, O_PASSWORD_STDIN},
    {"client-id", 0, OPT_VALUE, O_CLIENT_ID}, {"client-secret-stdin", 0, OPT_FLAG, O_SECRET_STDIN},
};

#define N_BASE ((int)(sizeof(login_base_opts) / sizeof(login_base_opts[0])))

/* login_base_opts, then refused_secrets as options with a value (so that
 * the secret after them is taken, never read as the user's name nor
 * echoed in the message), then the end. */
static void login_spec(struct opt_spec *spec)
{
    int i;

    for (i = 0; i < N_BASE; i++)
        spec[i] = login_base_opts[i];
    for (i = 0; i < N_REFUSED; i++)
        spec[N_BASE + i] = (struct opt_spec){refused_secrets[i].lng, refused_secrets[i].shrt,
                                             OPT_VALUE, O_REFUSED + i};
    spec[N_BASE + N_REFUSED] = (struct opt_spec){NULL, 0, 0, 0};
}

static const struct cli_cmd login_cmd = {
    "allot login",
    "[--url URL[,URL...]] [[user] USER | --user USER [--password-stdin] | --client-id ID "
    "[--client-secret-stdin]]",
    "Logs in to allotd and keeps the tokens in ~/.allot/config.json (mode 0600;\n"
    "ALLOT_CONFIG names another file). Without --password-stdin the password is\n"
    "asked for on the terminal. The URL is remembered for the next login.\n\n"
    "  --url URL[,URL...]      the server, such as http://127.0.0.1:8080; several\n"
    "                          (replicas of allotd), comma-separated: a command moves\n"
    "                          to the next when one cannot be reached or answers 503\n"
    "                          (--server is the same)\n"
    "  -u, --user USER         log in as a user (allot login USER and runai's\n"
    "                          allot login user -u USER are the same)\n"
    "  --password-stdin        read the password from the first line of stdin\n"
    "  --client-id ID          log in as a service account\n"
    "  --client-secret-stdin   read its secret from the first line of stdin\n"
    "A password or secret on the command line (-p, --password) is refused: ps\n"
    "shows it to every user of the machine.\n\n"
    "  echo \"$PASSWORD\" | allot login --url http://127.0.0.1:8080 --user admin --password-stdin\n",
};

struct login_args {
    const char *url;
    const char *user;
    const char *client_id;
    int from_stdin;
    int secret_stdin;
};

/* ---- reading secrets ---- */

static void chomp(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
}

static int read_line(char *buf, size_t len)
{
    if (!fgets(buf, (int)len, stdin))
        return -1;
    chomp(buf);
    return 0;
}

/* Asks on the terminal; the answer is not echoed when secret is set. */
static int ask(const char *prompt, int secret, char *buf, size_t len)
{
    struct termios old, quiet;
    int muted = 0, rc;

    fprintf(stderr, "%s", prompt);
    fflush(stderr);
    if (secret && tcgetattr(STDIN_FILENO, &old) == 0) {
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        muted = tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0;
    }
    rc = read_line(buf, len);
    if (muted) {
        tcsetattr(STDIN_FILENO, TCSANOW, &old);
        fputc('\n', stderr);
    }
    return rc;
}

/* ---- login ---- */

/* The operands: USER (`allot login alice`), or runai's word `user`
 * before -u USER (`allot login user -u alice`). */
static int login_operands(const struct opts *o, struct login_args *a)
{
    int i = 0;

    if (o->n_pos > 0 && strcmp(o->pos[0], "user") == 0 && a->user)
        i = 1;
    if (o->has_rest || o->n_pos > i + 1 || (o->n_pos > i && a->user))
        return cli_usage_error(&login_cmd, "unexpected argument '%s'",
                               o->n_pos > i + (a->user ? 0 : 1)
                                   ? o->pos[i + (a->user ? 0 : 1)] : "--");
    if (o->n_pos > i)
        a->user = o->pos[i];
    return CLI_OK;
}

static int login_args_in(const struct opts *o, struct login_args *a)
{
    struct servers s;
    char why[256];
    int i, rc;

    memset(a, 0, sizeof(*a));
    for (i = 0; i < o->n_hits; i++) {
        const char *v = o->hits[i].val;
        int r = o->hits[i].id - O_REFUSED;
        if (r >= 0 && r < N_REFUSED)
            return cli_usage_error(&login_cmd, "a secret is never taken from the command line "
                                               "(ps shows it to every user): instead of --%s, "
                                               "use %s", refused_secrets[r].lng,
                                   refused_secrets[r].instead);
        switch (o->hits[i].id) {
        case O_URL: a->url = v; break;
        case O_USER: a->user = v; break;
        case O_PASSWORD_STDIN: a->from_stdin = 1; break;
        case O_CLIENT_ID: a->client_id = v; break;
        case O_SECRET_STDIN: a->secret_stdin = 1; break;
        }
    }
    if ((rc = login_operands(o, a)) != CLI_OK)
        return rc;
    if (a->user && a->client_id)
        return cli_usage_error(&login_cmd, "--user and --client-id exclude each other");
    if (a->from_stdin && !a->user)
        return cli_usage_error(&login_cmd, "--password-stdin needs --user USER");
    if (a->secret_stdin && !a->client_id)
        return cli_usage_error(&login_cmd, "--client-secret-stdin needs --client-id ID");
    if (a->url && servers_parse(a->url, &s, why, sizeof(why)) != 0)
        return cli_usage_error(&login_cmd, "--url %s", why);
    if (!a->user && !a->client_id && !isatty(STDIN_FILENO))
        return cli_usage_error(&login_cmd, "no terminal to ask on: give --user USER "
                                           "--password-stdin, or --client-id ID "
                                           "--client-secret-stdin");
    return CLI_OK;
}

/* Fills login (user or client id) and secret from the arguments, stdin
 * or the terminal. */
static int credentials(const struct login_args *a, char *login, char *secret)
{
    int piped = a->from_stdin || a->secret_stdin;

    if (a->user || a->client_id)
        snprintf(login, SECRET_MAX, "%s", a->user ? a->user : a->client_id);
    else if (ask("User: ", 0, login, SECRET_MAX) != 0 || !login[0])
        return cli_usage_error(&login_cmd, "no user given");
    if (!piped && !isatty(STDIN_FILENO))
        return cli_usage_error(&login_cmd, "no terminal to ask the %s on: pipe it with %s",
                               a->client_id ? "secret" : "password",
                               a->client_id ? "--client-secret-stdin" : "--password-stdin");
    if (piped ? read_line(secret, SECRET_MAX) != 0
              : ask(a->client_id ? "Client secret: " : "Password: ", 1, secret, SECRET_MAX) != 0)
        secret[0] = 0;
    if (!secret[0])
        return cli_usage_error(&login_cmd, "no %s given%s", a->client_id ? "secret" : "password",
                               piped ? " on standard input" : "");
    return CLI_OK;
}

static char *grant_form(const struct login_args *a, const char *login, const char *secret)
{
    char *l = client_escape(login), *s = client_escape(secret), *form = NULL;

    if (l && s)
        form = a->client_id
                   ? cli_strf("grant_type=client_credentials&client_id=%s&client_secret=%s", l, s)
                   : cli_strf("grant_type=password&username=%s&password=%s", l, s);
    if (s)
        memset(s, 0, strlen(s));
    free(l);
    free(s);
    return form;
}

/* Points the config at url; another server forgets the default project. */
static int set_url(struct cli_config *cfg, const char *url)
{
    char *u = strdup(url);
    size_t n;
    int rc = 0;

    if (!u)
        return -1;
    n = strlen(u);
    while (n > 0 && u[n - 1] == '/')
        u[--n] = 0;
    if (cfg->url && strcmp(cfg->url, u) != 0)
        rc = config_set(&cfg->project, NULL);
    if (rc == 0)
        rc = config_set(&cfg->url, u);
    free(u);
    return rc;
}

static int do_login(struct client *c, const struct login_args *a)
{
    struct cli_config *cfg = client_config(c);
    char *login = calloc(1, SECRET_MAX), *secret = calloc(1, SECRET_MAX), *form = NULL;
    int rc;

    if (!login || !secret) {
        rc = cli_fail("out of memory");
        goto out;
    }
    if (!a->url && !cfg->url) {
        rc = cli_usage_error(&login_cmd, "no server known yet: give --url http://HOST:8080");
        goto out;
    }
    rc = credentials(a, login, secret);
    if (rc != CLI_OK)
        goto out;
    form = grant_form(a, login, secret);
    if (!form || (a->url && set_url(cfg, a->url) != 0)) {
        rc = cli_fail("out of memory");
        goto out;
    }
    config_forget_login(cfg);
    rc = client_grant(c, form);
    if (rc == CLI_OK && config_set(&cfg->user, login) != 0)
        rc = cli_fail("out of memory");
    cfg->service_account = a->client_id != NULL;
    if (rc == CLI_OK)
        rc = config_save(cfg);
    if (rc == CLI_OK)
        printf("logged in to %s as %s\n", cfg->url, cfg->user);
out:
    if (form)
        memset(form, 0, strlen(form));
    if (secret)
        memset(secret, 0, SECRET_MAX);
    free(form);
    free(secret);
    free(login);
    return rc;
}

int cmd_login_main(int argc, char **argv)
{
    struct opt_spec spec[N_BASE + N_REFUSED + 1];
    struct login_args a;
    struct client *c = NULL;
    struct opts o;
    char err[256];
    int rc;

    login_spec(spec);
    rc = opts_parse(spec, argc - 1, argv + 1, &o, err, sizeof(err));

    if (rc == -2)
        rc = cli_fail("out of memory");
    else if (rc != 0)
        rc = cli_usage_error(&login_cmd, "%s", err);
    else if (o.help)
        rc = cli_help(&login_cmd);
    else if ((rc = login_args_in(&o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_ANONYMOUS)) == CLI_OK)
        rc = do_login(c, &a);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- logout, whoami and version: no options ---- */

static const struct cli_cmd logout_cmd = {
    "allot logout", "",
    "Forgets the tokens kept in the config; the server URL and the default\n"
    "project stay for the next login.\n",
};

static const struct cli_cmd whoami_cmd = {
    "allot whoami", "",
    "Shows who is logged in, to which server, the default project and the\n"
    "roles the access rules give.\n",
};

/* Checks that a command without options got none. */
static int no_arguments(const struct cli_cmd *cmd, int argc, char **argv, int *help)
{
    static const struct opt_spec none[] = {{NULL, 0, 0, 0}};
    struct opts o;
    char err[256];
    int rc = opts_parse(none, argc - 1, argv + 1, &o, err, sizeof(err));

    *help = o.help;
    if (rc == -2)
        rc = cli_fail("out of memory");
    else if (rc != 0)
        rc = cli_usage_error(cmd, "%s", err);
    else if (o.n_pos || o.has_rest)
        rc = cli_usage_error(cmd, "unexpected argument '%s'", o.n_pos ? o.pos[0] : "--");
    opts_free(&o);
    return rc;
}

int cmd_logout_main(int argc, char **argv)
{
    struct client *c = NULL;
    struct cli_config *cfg;
    int help, rc = no_arguments(&logout_cmd, argc, argv, &help);

    if (rc != CLI_OK || help)
        return rc == CLI_OK ? cli_help(&logout_cmd) : rc;
    rc = client_open(&c, CLIENT_ANONYMOUS);
    if (rc != CLI_OK)
        return rc;
    cfg = client_config(c);
    if (!cfg->access_token && !cfg->refresh_token) {
        printf("not logged in\n");
    } else {
        config_forget_login(cfg);
        rc = config_save(cfg);
        if (rc == CLI_OK)
            printf("logged out of %s\n", cfg->url ? cfg->url : "the server");
    }
    client_close(c);
    return rc;
}

static void print_roles(const json_t *rules)
{
    size_t i;
    json_t *r;

    if (json_array_size(rules) == 0)
        printf("Roles:     none: an administrator grants them with access rules\n");
    json_array_foreach(rules, i, r) {
        const char *role = json_string_value(json_object_get(r, "roleName"));
        const char *scope = json_string_value(json_object_get(r, "scopeType"));
        const char *name = json_string_value(json_object_get(r, "scopeName"));
        if (!scope || strcmp(scope, "system") == 0 || !name)
            name = "";
        printf("%-11s%s on %s%s%s\n", i == 0 ? "Roles:" : "", role ? role : "?",
               scope ? scope : "?", name[0] ? " " : "", name);
    }
}

int cmd_whoami_main(int argc, char **argv)
{
    struct client *c = NULL;
    struct cli_config *cfg;
    json_t *me = NULL, *claims;
    const char *who;
    int help, rc = no_arguments(&whoami_cmd, argc, argv, &help);

    if (rc != CLI_OK || help)
        return rc == CLI_OK ? cli_help(&whoami_cmd) : rc;
    rc = client_open(&c, CLIENT_LOGGED_IN);
    if (rc == CLI_OK)
        rc = client_json(c, "GET", "/api/v1/authorization/me/access-rules", NULL, &me);
    if (rc == CLI_OK) {
        cfg = client_config(c);
        claims = client_token_claims(cfg->access_token);
        who = json_string_value(json_object_get(claims, "preferred_username"));
        printf("User:      %s\n", who ? who : cfg->user ? cfg->user : "?");
        printf("Server:    %s\n", cfg->url);
        if (cfg->project)
            printf("Project:   %s (the default)\n", cfg->project);
        else
            printf("Project:   none: allot project set NAME picks a default\n");
        /* {accessRules: {totalRecords, displayRecords, accessRules: [...]}} */
        print_roles(json_object_get(json_object_get(me, "accessRules"), "accessRules"));
        json_decref(claims);
    }
    json_decref(me);
    client_close(c);
    return rc;
}

static const struct cli_cmd version_cmd = {
    "allot version", "",
    "Prints allot's version and, when a server is known, the version its\n"
    "allotd answers (GET /api/v1/clusters).\n",
};

int cmd_version_main(int argc, char **argv)
{
    struct client *c = NULL;
    json_t *clusters = NULL;
    const char *v;
    int help, rc = no_arguments(&version_cmd, argc, argv, &help);

    if (rc != CLI_OK || help)
        return rc == CLI_OK ? cli_help(&version_cmd) : rc;
    printf("Client:  allot %s\n", ALLOT_VERSION_STRING);
    fflush(stdout);
    if (client_open(&c, CLIENT_ANONYMOUS) != CLI_OK || !client_config(c)->url ||
        !client_config(c)->access_token) {
        client_close(c);
        return CLI_OK;
    }
    /* the server's answer is a line more; its failure is printed, not the status */
    if (client_json(c, "GET", "/api/v1/clusters", NULL, &clusters) == CLI_OK) {
        v = json_string_value(json_object_get(json_array_get(clusters, 0), "version"));
        printf("Server:  allotd %s at %s\n", v ? v : "?", client_config(c)->url);
    }
    json_decref(clusters);
    client_close(c);
    return CLI_OK;
}
