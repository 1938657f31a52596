/*
 * main.c: the entry of `allot`: dispatches `allot <command>` to the
 * command's own main (or a runai v1 form to v1.c), and answers --help and
 * --version. An unknown command is answered with the nearest name among
 * the commands and the v1 words ("did you mean 'submit'?").
 */
#include <stdio.h>
#include <string.h>

#include "allot_version.h"
#include "cli.h"
#include "replay.h"
#include "simulate.h"
#include "v1.h"

struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
    {"login", "log in to allotd and keep the token", cmd_login_main},
    {"logout", "forget the token", cmd_logout_main},
    {"whoami", "who is logged in, where, with which roles", cmd_whoami_main},
    {"project", "list, set (the default), create, edit or delete projects", cmd_project_main},
    {"department", "list, create, edit or delete departments", cmd_department_main},
    {"training", "submit, list, describe, delete, suspend, resume, logs", cmd_training_main},
    {"workspace", "the same for workspaces", cmd_workspace_main},
    {"inference", "the same for inference servers", cmd_inference_main},
    {"distributed", "the same for distributed training", cmd_distributed_main},
    {"workload", "every type: list, describe, delete, suspend, resume, logs",
     cmd_workload_main},
    {"node", "list the nodes and their free GPUs", cmd_node_main},
    {"nodepool", "list the node pools and their free GPUs; create, edit or delete one",
     cmd_nodepool_main},
    {"whatif", "what a quota change, a drained node or a workload deleted or suspended would do",
     cmd_whatif_main},
    {"environment", "environment assets: list, describe, create, delete", cmd_environment_main},
    {"compute", "compute resource assets: the same", cmd_compute_main},
    {"datasource", "data source assets (host paths, git): the same", cmd_datasource_main},
    {"credential", "credentials (values never shown): the same", cmd_credential_main},
    {"template", "workload templates: the same", cmd_template_main},
    {"access-rule", "list, create or delete who may do what where", cmd_access_rule_main},
    {"policy", "list the workload policies; describe a scope's, merged", cmd_policy_main},
    {"agent", "create, list or revoke the tokens of allot-agent", cmd_agent_main},
    {"completion", "print a shell completion script (bash)", cmd_completion_main},
    {"version", "print allot's version, and allotd's when logged in", cmd_version_main},
    {"simulate", "run scenario files through the scheduling core", simulate_main},
    {"replay", "replay a GPU cluster trace and report scheduling quality", replay_main},
};

#define N_COMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *to)
{
    int i;

    fprintf(to, "usage: allot <command> [args]   (allot --help, allot --version)\n");
    if (to != stdout)
        return;
    fprintf(to, "commands:\n");
    for (i = 0; i < N_COMMANDS; i++)
        fprintf(to, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "runai v1 forms (submit NAME [--gpu N] [--interactive], list jobs, describe [job]\n"
                "NAME, describe project NAME, delete [job] NAME, delete --all, config project NAME,\n"
                "logs, suspend, resume, top node) run as the commands above, named on stderr.\n");
}

/* "allot: unknown command 'sumbit': did you mean 'submit'?" */
static void unknown(const char *word)
{
    int d_cmd, d_v1;
    const char *cmd = cli_nearest(word, commands, sizeof(commands[0]), N_COMMANDS, &d_cmd);
    const char *v1 = v1_nearest(word, &d_v1);
    const char *near = v1 && d_v1 < d_cmd ? v1 : cmd;

    fprintf(stderr, "allot: unknown command '%s'", word);
    if (near)
        fprintf(stderr, ": did you mean '%s'?", near);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    int i;

    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("allot %s\n", ALLOT_VERSION_STRING);
        return 0;
    }
    for (i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    if ((i = v1_main(argc - 1, argv + 1)) >= 0)
        return i;
    unknown(argv[1]);
    usage(stderr);
    return 2;
}
