/*
 * cli.h: what the client commands of `allot` share: exit statuses, the
 * usage-error and help printers, small string helpers, and the entry of
 * every command group (one cmd_*.c file each).
 *
 * Exit statuses:
 *   0  the command did what it was asked;
 *   1  the server refused or failed, or could not be reached (the reason
 *      is printed on stderr);
 *   2  the command line is wrong (a message and the usage line on stderr).
 */
#ifndef ALLOT_CLI_H
#define ALLOT_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

/* A command as the user types it, for messages: "allot training submit"
 * and what follows it on the usage line. */
struct cli_cmd {
    const char *name;
    const char *usage;
    const char *help;          /* the lines after the usage line in --help */
};

/* Prints "NAME: message" and "usage: NAME USAGE" on stderr; returns 2. */
int cli_usage_error(const struct cli_cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the usage line and the help text on stdout; returns 0. */
int cli_help(const struct cli_cmd *c);

/* Prints "allot: message" on stderr; returns 1. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A malloc'd formatted string, or NULL when out of memory. */
char *cli_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *cli_vstrf(const char *fmt, va_list ap);

/* Case-insensitive ASCII equality. */
int cli_eq_nocase(const char *a, const char *b);

/* Parses a whole decimal number or a non-negative real; 0 ok, -1 not one. */
int cli_parse_int(const char *s, long min, long max, long *out);
int cli_parse_real(const char *s, double min, double max, double *out);

/* The name nearest to word among the rows of a table whose rows each
 * begin with their name (a const char *): n rows of stride bytes, or
 * n < 0 for rows up to one with a NULL name. A name counts as near when
 * it is at most 2 edits away (a swap of neighbours is one edit) and
 * fewer than word's length; NULL when none is. *dist (when not NULL)
 * gets the edits, for comparing tables. */
const char *cli_nearest(const char *word, const void *rows, size_t stride, int n, int *dist);

/* The command groups, each `argc/argv` from the group's name on. */
int cmd_login_main(int argc, char **argv);
int cmd_logout_main(int argc, char **argv);
int cmd_whoami_main(int argc, char **argv);
int cmd_version_main(int argc, char **argv);
int cmd_project_main(int argc, char **argv);
int cmd_department_main(int argc, char **argv);
int cmd_training_main(int argc, char **argv);
int cmd_workspace_main(int argc, char **argv);
int cmd_inference_main(int argc, char **argv);
int cmd_distributed_main(int argc, char **argv);
int cmd_workload_main(int argc, char **argv);
int cmd_node_main(int argc, char **argv);
int cmd_nodepool_main(int argc, char **argv);
int cmd_agent_main(int argc, char **argv);
int cmd_access_rule_main(int argc, char **argv);
int cmd_policy_main(int argc, char **argv);
int cmd_completion_main(int argc, char **argv);
int cmd_whatif_main(int argc, char **argv);
int cmd_environment_main(int argc, char **argv);
int cmd_compute_main(int argc, char **argv);
int cmd_datasource_main(int argc, char **argv);
int cmd_credential_main(int argc, char **argv);
int cmd_template_main(int argc, char **argv);

#endif
