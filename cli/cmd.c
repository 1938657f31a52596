/*
 * cmd.c: the pieces every command group uses: verb dispatch, option
 * parsing with usage errors, output formats, the plain list verb, reading
 * nested JSON, finding objects by name through the API's lists, and
 * asking before a delete.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "table.h"

/* The group's --help: its usage and text, then "  NAME      help" per verb,
 * a continued line indented under the first. */
static int verb_help(const struct cli_cmd *cmd, const struct verb *verbs)
{
    const struct verb *v;
    const char *p;

    cli_help(cmd);
    if (verbs[0].help && !(cmd->help && cmd->help[0]))
        putchar('\n');
    for (v = verbs; v->name; v++) {
        if (!v->help)
            continue;
        printf("  %-10s", v->name);
        for (p = v->help; *p; p++)
            if (*p == '\n')
                printf("\n%12s", "");
            else
                putchar(*p);
        putchar('\n');
    }
    return CLI_OK;
}

int verb_dispatch(const struct cli_cmd *cmd, const struct verb *verbs, int argc, char **argv)
{
    const struct verb *v;
    const char *near;

    if (argc < 2)
        return cli_usage_error(cmd, "a command is missing");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return verb_help(cmd, verbs);
    for (v = verbs; v->name; v++)
        if (strcmp(argv[1], v->name) == 0)
            return v->run(v->ctx, argc - 1, argv + 1);
    near = cli_nearest(argv[1], verbs, sizeof(verbs[0]), -1, NULL);
    if (near)
        return cli_usage_error(cmd, "unknown command '%s': did you mean '%s'?", argv[1], near);
    return cli_usage_error(cmd, "unknown command '%s'", argv[1]);
}

int cmd_parse(const struct cli_cmd *cmd, const struct opt_spec *spec, int argc, char **argv,
              struct opts *o)
{
    char err[256];
    int rc = opts_parse(spec, argc - 1, argv + 1, o, err, sizeof(err));

    if (rc == -2)
        return cli_fail("out of memory");
    if (rc != 0)
        return cli_usage_error(cmd, "%s", err);
    return CLI_OK;
}

int take_format(const struct opt_hit *h, int *format)
{
    static const struct {
        int id, format;
    } formats[] = {
        {O_FORMAT_JSON, OUT_JSON}, {O_FORMAT_YAML, OUT_YAML}, {O_FORMAT_BARE, OUT_BARE},
        {O_FORMAT_CSV, OUT_CSV},
    };
    size_t i;
    int f = -2;

    for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (formats[i].id == h->id)
            f = formats[i].format;
    if (f == -2)
        return 0;
    if (*format == OUT_TABLE || *format == f)
        *format = f;
    else if ((*format == OUT_CSV && f == OUT_BARE) || (*format == OUT_BARE && f == OUT_CSV) ||
             *format == OUT_CSV_BARE)
        *format = f == OUT_CSV || f == OUT_BARE ? OUT_CSV_BARE : FORMAT_CONFLICT;
    else
        *format = FORMAT_CONFLICT;
    return 1;
}

int cmd_list_args(const struct cli_cmd *cmd, const struct opts *o, int *format)
{
    int i;

    *format = OUT_TABLE;
    for (i = 0; i < o->n_hits; i++)
        take_format(&o->hits[i], format);
    if (*format == FORMAT_CONFLICT)
        return cli_usage_error(cmd, FORMAT_CONFLICT_MSG);
    if (o->n_pos || o->has_rest)
        return cli_usage_error(cmd, "unexpected argument '%s'", o->n_pos ? o->pos[0] : "--");
    return CLI_OK;
}

int cmd_one_operand(const struct cli_cmd *cmd, const struct opts *o, const char *what)
{
    if (o->n_pos == 1 && !o->has_rest)
        return CLI_OK;
    if (o->n_pos > 1)
        return cli_usage_error(cmd, "unexpected argument '%s'", o->pos[1]);
    return cli_usage_error(cmd, "%s is missing", what);
}

/* Prints a table or the document by format. */
static void print_listing(int format, const struct table *t, const json_t *doc)
{
    if (format == OUT_JSON || format == OUT_YAML)
        out_document(stdout, format, doc);
    else if (format == OUT_CSV || format == OUT_CSV_BARE)
        table_print_csv(t, stdout, format == OUT_CSV);
    else
        table_print(t, stdout, format != OUT_BARE, "");
}

int print_items(int format, int n_cols, const char *const *heads, const json_t *all,
                list_row_fn *row, const void *ctx)
{
    struct table t;
    json_t *item;
    size_t i;
    int oom;

    table_init(&t, n_cols, heads);
    json_array_foreach(all, i, item)
        row(&t, ctx, item);
    oom = t.oom;
    if (!oom)
        print_listing(format, &t, all);
    table_free(&t);
    return oom ? cli_fail("out of memory") : CLI_OK;
}

static const struct opt_spec list_opts[] = {FORMAT_OPTIONS, {NULL, 0, 0, 0}};

/* A row of a struct list_kind (ctx). */
static void kind_row(struct table *t, const void *ctx, const json_t *item)
{
    const struct list_kind *k = ctx;

    k->row(t, item);
}

int list_verb(const void *ctx, int argc, char **argv)
{
    const struct list_kind *k = ctx;
    struct client *c = NULL;
    json_t *all = NULL;
    struct opts o;
    int format, rc = cmd_parse(&k->cmd, list_opts, argc, argv, &o);

    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->cmd);
    else if (rc == CLI_OK && (rc = cmd_list_args(&k->cmd, &o, &format)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = client_list_all(c, k->path, k->key, &all)) == CLI_OK)
        rc = print_items(format, k->n_cols, k->heads, all, kind_row, k);
    json_decref(all);
    client_close(c);
    opts_free(&o);
    return rc;
}

/* ---- nested JSON ---- */

static const json_t *walk(const json_t *o, const char *path)
{
    char key[64];

    while (o && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        o = json_object_get(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

const char *jstr(const json_t *o, const char *path, const char *def)
{
    const char *s = json_string_value(walk(o, path));

    return s ? s : def;
}

double jnum(const json_t *o, const char *path, double def)
{
    const json_t *v = walk(o, path);

    return json_is_number(v) ? json_number_value(v) : def;
}

/* ---- finding by name ---- */

static int find_named(struct client *c, const char *path, const char *key, const char *name,
                      json_t **out)
{
    json_t *all = NULL, *item;
    size_t i;
    int rc = client_list_all(c, path, key, &all);

    *out = NULL;
    if (rc != CLI_OK)
        return rc;
    json_array_foreach(all, i, item)
        if (strcmp(jstr(item, "name", ""), name) == 0) {
            *out = json_incref(item);
            break;
        }
    json_decref(all);
    return CLI_OK;
}

int find_project(struct client *c, const char *name, json_t **out)
{
    int rc = find_named(c, "/api/v1/org-unit/projects", "projects", name, out);

    if (rc == CLI_OK && !*out)
        rc = cli_fail("no project named %s: allot project list shows the projects you may see",
                      name);
    return rc;
}

int find_department(struct client *c, const char *name, json_t **out)
{
    int rc = find_named(c, "/api/v1/org-unit/departments", "departments", name, out);

    if (rc == CLI_OK && !*out)
        rc = cli_fail("no department named %s: allot department list shows them", name);
    return rc;
}

int find_pool(struct client *c, const char *name, json_t **out)
{
    int rc = find_named(c, "/api/v1/node-pools", "nodepools", name, out);

    if (rc == CLI_OK && !*out)
        rc = cli_fail("no node pool named %s: allot nodepool list shows them", name);
    return rc;
}

int delete_allowed(const struct cli_cmd *cmd, int yes)
{
    if (yes || isatty(STDIN_FILENO))
        return CLI_OK;
    return cli_usage_error(cmd, "standard input is not a terminal, so allot cannot ask "
                                "before deleting: add -y to delete without asking");
}

int delete_confirmed(int yes, const char *question)
{
    char line[32];

    if (yes)
        return 1;
    fprintf(stderr, "%s? [y/N] ", question);
    fflush(stderr);
    if (!fgets(line, sizeof(line), stdin))
        return 0;
    return cli_eq_nocase(line, "y\n") || cli_eq_nocase(line, "yes\n");
}

static const struct opt_spec delete_opts[] = {{"yes", 'y', OPT_FLAG, 1}, {NULL, 0, 0, 0}};

static int delete_named(struct client *c, const struct delete_kind *k, const char *name, int yes)
{
    json_t *found = NULL, *answer = NULL;
    char *path = NULL, *question = cli_strf("Delete %s %s", k->noun, name);
    int rc = question ? k->find(c, name, &found) : cli_fail("out of memory");

    if (rc == CLI_OK && !delete_confirmed(yes, question))
        printf("%s %s was not deleted\n", k->noun, name);
    else if (rc == CLI_OK) {
        path = cli_strf("%s/%s", k->path, jstr(found, "id", ""));
        rc = path ? client_json(c, "DELETE", path, NULL, &answer) : cli_fail("out of memory");
        if (rc == CLI_OK)
            printf("%s %s deleted\n", k->noun, name);
    }
    json_decref(answer);
    json_decref(found);
    free(question);
    free(path);
    return rc;
}

int delete_verb(const void *ctx, int argc, char **argv)
{
    const struct delete_kind *k = ctx;
    struct client *c = NULL;
    struct opts o;
    int rc = cmd_parse(&k->cmd, delete_opts, argc, argv, &o);

    if (rc == CLI_OK && o.help)
        rc = cli_help(&k->cmd);
    else if (rc == CLI_OK && o.n_pos > 1)
        rc = cli_usage_error(&k->cmd, "one %s at a time", k->noun);
    else if (rc == CLI_OK && (o.n_pos != 1 || o.has_rest))
        rc = cli_usage_error(&k->cmd, "NAME is missing");
    else if (rc == CLI_OK && (rc = delete_allowed(&k->cmd, o.n_hits > 0)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK)
        rc = delete_named(c, k, o.pos[0], o.n_hits > 0);
    client_close(c);
    opts_free(&o);
    return rc;
}

int filter_add(char **filter, const char *key, const char *value)
{
    char *s;

    if (!value)
        return 0;
    s = cli_strf("%s%s%s==%s", *filter ? *filter : "", *filter ? "," : "", key, value);
    if (!s)
        return -1;
    free(*filter);
    *filter = s;
    return 0;
}

char *workloads_path(const char *filter)
{
    char *esc, *path;

    if (!filter)
        return cli_strf("/api/v1/workloads");
    esc = client_escape(filter);
    path = esc ? cli_strf("/api/v1/workloads?filterBy=%s", esc) : NULL;
    free(esc);
    return path;
}

static char *workload_query(const struct wl_key *k)
{
    char *filter = NULL, *path = NULL;

    if (filter_add(&filter, "name", k->name) == 0 &&
        filter_add(&filter, "projectName", k->project) == 0 &&
        filter_add(&filter, "type", k->type) == 0)
        path = workloads_path(filter);
    free(filter);
    return path;
}

static int not_one(const struct wl_key *k, const json_t *list)
{
    size_t i, n = json_array_size(list);
    json_t *w;

    if (n == 0 && k->project)
        return cli_fail("no %s named %s in project %s: allot %s list -p %s shows them", k->noun,
                        k->name, k->project, k->noun, k->project);
    if (n == 0)
        return cli_fail("no %s named %s: allot %s list -A shows them", k->noun, k->name,
                        k->noun);
    fprintf(stderr, "allot: %zu workloads are named %s, in projects", n, k->name);
    json_array_foreach(list, i, w)
        fprintf(stderr, "%s %s", i ? "," : "", jstr(w, "projectName", "?"));
    fprintf(stderr, ": choose one with -p PROJECT\n");
    return CLI_FAIL;
}

int find_workload(struct client *c, const struct wl_key *k, json_t **out)
{
    char *query = workload_query(k), *path = query ? cli_strf("%s&limit=500", query) : NULL;
    json_t *page = NULL, *list;
    int rc;

    *out = NULL;
    free(query);
    if (!path)
        return cli_fail("out of memory");
    rc = client_json(c, "GET", path, NULL, &page);
    list = json_object_get(page, "workloads");
    if (rc == CLI_OK && json_array_size(list) == 1)
        *out = json_incref(json_array_get(list, 0));
    else if (rc == CLI_OK)
        rc = not_one(k, list);
    json_decref(page);
    free(path);
    return rc;
}
