/*
 * main.c: the entry of `allot`: dispatches `allot <command>` to the
 * command's own main, and answers --help and --version.
 */
#include <stdio.h>
#include <string.h>

#include "simulate.h"

#ifndef ALLOT_VERSION
#define ALLOT_VERSION "unknown"
#endif

struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
    {"simulate", "run scenario files through the scheduling core", simulate_main},
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
        fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
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
        printf("allot %s\n", ALLOT_VERSION);
        return 0;
    }
    for (i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "allot: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
