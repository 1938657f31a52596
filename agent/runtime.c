/*
 * runtime.c: which container runtime runs workloads that name an image,
 * and how a command line becomes an argv.
 *
 * A runtime is usable when its binary is on PATH and `<runtime> info`
 * succeeds in time (a docker client without a reachable daemon is not). Command lines are split like a shell splits words:
 * whitespace separates, '...' and "..." quote, a backslash escapes; nothing
 * is expanded (no variables, no globs), so what runs is what was written.
 */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usable(const char *name, int timeout_ms)
{
    char path[AGENT_PATH_MAX];
    char *argv[] = {path, "info", NULL};

    if (find_program(name, path, sizeof(path)) != 0)
        return 0;
    return proc_run(argv, timeout_ms, NULL, 0) == 0;
}

void runtime_pick(const char *opt, int timeout_ms, char *out, size_t len)
{
    out[0] = 0;
    if (strcmp(opt, "none") == 0)
        return;
    if (strcmp(opt, "auto") != 0) {
        if (usable(opt, timeout_ms))
            snprintf(out, len, "%s", opt);
        else
            fprintf(stderr, "allot-agent: %s does not answer; images will not run\n", opt);
        return;
    }
    if (usable("docker", timeout_ms))
        snprintf(out, len, "docker");
    else if (usable("podman", timeout_ms))
        snprintf(out, len, "podman");
}

static int push(char ***argv, int *argc, int *cap, char *word)
{
    if (*argc + 2 > *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        char **nv = realloc(*argv, sizeof(*nv) * (size_t)ncap);
        if (!nv)
            return -1;
        *argv = nv;
        *cap = ncap;
    }
    (*argv)[(*argc)++] = word;
    (*argv)[*argc] = NULL;
    return 0;
}

/* Reads one word at *s into out (as long as the rest of s); 1 if a word
 * was read, 0 at the end, -1 on an unterminated quote. */
static int next_word(const char **s, char *out)
{
    const char *p = *s;
    char quote = 0;
    int any = 0;

    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    for (; *p; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
            else if (*p == '\\' && quote == '"' && (p[1] == '"' || p[1] == '\\'))
                *out++ = *++p;
            else
                *out++ = *p;
        } else if (*p == '\'' || *p == '"') {
            quote = *p;
            any = 1;
        } else if (*p == ' ' || *p == '\t' || *p == '\n') {
            break;
        } else if (*p == '\\' && p[1]) {
            *out++ = *++p;
            any = 1;
        } else {
            *out++ = *p;
            any = 1;
        }
    }
    *out = 0;
    *s = p;
    if (quote)
        return -1;
    return any;
}

int split_words(const char *s, char ***argv, int *argc)
{
    int cap = *argc ? *argc + 1 : 0, rc;
    char *word;

    if (*argv == NULL)
        cap = 0;
    while (s && *s) {
        word = malloc(strlen(s) + 1);
        if (!word)
            return -1;
        rc = next_word(&s, word);
        if (rc <= 0) {
            free(word);
            if (rc < 0)
                return -1;
            break;
        }
        if (push(argv, argc, &cap, word) != 0) {
            free(word);
            return -1;
        }
    }
    return 0;
}

void free_words(char **argv)
{
    int i;

    for (i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}
