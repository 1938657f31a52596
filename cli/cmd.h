/*
 * cmd.h: what the cmd_*.c files share beyond cli.h: verb dispatch inside
 * a command group, the output-format flags of list commands, and finding
 * projects, departments and workloads by name (names are what users
 * type; the API wants ids).
 */
#ifndef ALLOT_CMD_H
#define ALLOT_CMD_H

#include <jansson.h>

#include "cli.h"
#include "client.h"
#include "opts.h"
#include "output.h"

/* A verb of a command group: run gets ctx, and argv from the verb on;
 * help is its line in the group's --help ('\n' starts a continued line),
 * or NULL where the group's own help text lists it. */
struct verb {
    const char *name;
    int (*run)(const void *ctx, int argc, char **argv);
    const void *ctx;
    const char *help;
};

/* Runs argv[1] of group `cmd` from verbs (ended by a NULL name); "--help"
 * prints the usage, the group's help text and a line per verb with help. */
int verb_dispatch(const struct cli_cmd *cmd, const struct verb *verbs, int argc, char **argv);

/* Parses the options of a verb; help is left in o->help. CLI_OK, or an
 * exit status with the message printed. o is freed by the caller. */
int cmd_parse(const struct cli_cmd *cmd, const struct opt_spec *spec, int argc, char **argv,
              struct opts *o);

/* The option ids of --json, --yaml, --no-headers and --csv (and -o FORMAT
 * for describe), shared by every list. --csv prints the table's columns
 * as RFC 4180 CSV (a header line, CRLF line ends); with --no-headers too,
 * the header line is left out. */
enum { O_FORMAT_JSON = 1000, O_FORMAT_YAML, O_FORMAT_BARE, O_FORMAT_OUTPUT, O_FORMAT_CSV };
#define FORMAT_OPTIONS                                                                         \
    {"json", 0, OPT_FLAG, O_FORMAT_JSON}, {"yaml", 0, OPT_FLAG, O_FORMAT_YAML},                \
    {"no-headers", 0, OPT_FLAG, O_FORMAT_BARE}, {"csv", 0, OPT_FLAG, O_FORMAT_CSV}
#define FORMAT_USAGE "[--json | --yaml | --csv] [--no-headers]"
#define FORMAT_HELP                                                                            \
    "  --json, --yaml        the API's objects\n"                                              \
    "  --csv                 the table's columns as CSV (RFC 4180)\n"                          \
    "  --no-headers          the table (or CSV) without its titles\n"

/* Takes a format option into *format (and --no-headers into *bare);
 * returns 1 if the hit was one. Two different formats leave
 * FORMAT_CONFLICT, for the caller to report. */
int take_format(const struct opt_hit *h, int *format);
#define FORMAT_CONFLICT (-1)
#define FORMAT_CONFLICT_MSG "--json, --yaml and --csv exclude each other, and --no-headers " \
                            "goes with the table or --csv only"

/* Reads the options of a list without operands: the format, nothing
 * else. CLI_OK or a usage error. */
int cmd_list_args(const struct cli_cmd *cmd, const struct opts *o, int *format);

/* Checks that o holds one operand and nothing after "--": CLI_OK, or the
 * usage error "WHAT is missing" or "unexpected argument" for the first
 * one too many. */
int cmd_one_operand(const struct cli_cmd *cmd, const struct opts *o, const char *what);

/* A list's items (all, an array) printed by format: as the document for
 * --json and --yaml, else as a table of n_cols columns under heads, a row
 * per item made by row(t, ctx, item). CLI_OK, or the failure said. */
struct table;
typedef void list_row_fn(struct table *t, const void *ctx, const json_t *item);
int print_items(int format, int n_cols, const char *const *heads, const json_t *all,
                list_row_fn *row, const void *ctx);

/* A list verb with no options but the formats: GET path (every page),
 * the array under key, one table row per item. */
struct list_kind {
    struct cli_cmd cmd;
    const char *path, *key;
    int n_cols;
    const char *const *heads;
    void (*row)(struct table *t, const json_t *item);
};

/* The verb of a struct list_kind (ctx). */
int list_verb(const void *ctx, int argc, char **argv);

/* Appends "key==value" to a filterBy list (*filter, malloc'd, NULL when
 * empty); a NULL value adds nothing. 0 ok, -1 out of memory. */
int filter_add(char **filter, const char *key, const char *value);

/* /api/v1/workloads with the filter escaped into filterBy (malloc'd). */
char *workloads_path(const char *filter);

/* The project named name (a new reference), with a message when none. */
int find_project(struct client *c, const char *name, json_t **out);
int find_department(struct client *c, const char *name, json_t **out);
int find_pool(struct client *c, const char *name, json_t **out);

/* Deleting asks first on a terminal; elsewhere -y is required.
 * delete_allowed: CLI_OK, or the usage error when stdin is no terminal
 * and yes is 0. delete_confirmed: asks QUESTION? [y/N] on stderr (when
 * yes is 0); 1 if the answer is yes. */
int delete_allowed(const struct cli_cmd *cmd, int yes);
int delete_confirmed(int yes, const char *question);

/* A delete verb, NAME [-y]: finds the object by its name, asks (or takes
 * -y), and sends DELETE path/{id}. */
struct delete_kind {
    struct cli_cmd cmd;
    const char *noun;          /* "node pool", in messages */
    const char *path;          /* "/api/v1/node-pools" */
    int (*find)(struct client *c, const char *name, json_t **out);
};

/* The verb of a struct delete_kind (ctx). */
int delete_verb(const void *ctx, int argc, char **argv);

/* The node pool verbs beyond list (cmd_nodepool.c). */
int nodepool_create(const void *ctx, int argc, char **argv);
int nodepool_edit(const void *ctx, int argc, char **argv);
extern const struct delete_kind nodepool_delete;

/* The one workload named name, in project (NULL: any the caller reads)
 * and of type (the API's word, "Training", or NULL: any). noun names the
 * kind in messages ("training"). */
struct wl_key {
    const char *name;
    const char *project;
    const char *type;
    const char *noun;
};
int find_workload(struct client *c, const struct wl_key *k, json_t **out);

/* json_object_get chains: the string or number at a dotted path, or a
 * default. */
const char *jstr(const json_t *o, const char *path, const char *def);
/* A node pool answers its GPU placement null when it is the server's
 * default placement (docs/scheduler.md): the word shown for it. */
#define CLI_DEFAULT_GPU_PLACEMENT "fragmentation"
double jnum(const json_t *o, const char *path, double def);

/* Prints a dry-run submission's answer (POST ...?dryRun=true) in short:
 * where NOUN ("training") would run or why it would wait, then the
 * workloads it would stop, move or start (cmd_whatif.c). */
int whatif_print_dry_run(const char *noun, const json_t *answer);

#endif
