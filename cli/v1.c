/*
 * v1.c: the runai v1 command forms that older documents still use
 * (`runai submit NAME -i IMAGE --gpu N -p PROJECT [--interactive]`,
 * `runai list jobs`, `runai describe [job] NAME`, `runai delete job NAME`,
 * `runai delete --all`, `runai describe project NAME`, `runai config
 * project NAME`, `runai logs NAME`, ...), mapped onto allot's v2 commands.
 *
 * Step 1: the v1 words are found in a table of forms; a form allot cannot
 *         honour (bash, exec, attach, describe node, ...) is refused
 *         with the reason and what to use instead (exit 2);
 * Step 2: the words are rewritten: the v2 group and verb first, then the
 *         operands and flags (submit's flags through their own table:
 *         --gpu 0.5 becomes --gpu-portion-request 0.5, --interactive
 *         makes a workspace, --preemptible a preemptible one, and a v1
 *         flag with no counterpart is refused, never dropped; v1's
 *         --command "python train.py" with the command line as its value
 *         becomes v2's --command -- python train.py);
 * Step 3: one line on stderr names the v2 form ("allot: runai v1 form;
 *         running: allot workload describe a1"), then the v2 command
 *         runs with the new words.
 *
 * v1 deleted without asking, so `delete job` runs `workload delete -y`.
 */
#include "v1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

#define MAX_WORDS 512

/* A v1 command form and the v2 command it becomes. */
struct v1_form {
    const char *word;          /* v1's first word: "describe" */
    const char *object;        /* the word after it ("job"; a plural too), NULL: any */
    int (*run)(int argc, char **argv);   /* the v2 group, NULL: refused */
    const char *group, *verb;  /* the v2 words */
    const char *extra;         /* a flag that keeps v1's behaviour, or NULL */
    const char *refusal;       /* why allot cannot, when refused */
};

static const struct v1_form forms[] = {
    {"list", "job", cmd_workload_main, "workload", "list", NULL, NULL},
    {"list", "project", cmd_project_main, "project", "list", NULL, NULL},
    {"list", "node", cmd_node_main, "node", "list", NULL, NULL},
    {"list", "cluster", NULL, NULL, NULL, NULL,
     "allot serves one cluster; allot whoami names its server"},
    {"list", NULL, cmd_workload_main, "workload", "list", NULL, NULL},
    {"describe", "job", cmd_workload_main, "workload", "describe", NULL, NULL},
    {"describe", "project", cmd_project_main, "project", "describe", NULL, NULL},
    {"describe", "department", cmd_department_main, "department", "describe", NULL, NULL},
    {"describe", "node", NULL, NULL, NULL, NULL,
     "allot has no node describe; allot node list shows each node's pool, GPUs and their use"},
    {"describe", NULL, cmd_workload_main, "workload", "describe", NULL, NULL},
    {"config", "project", cmd_project_main, "project", "set", NULL, NULL},
    {"config", NULL, NULL, NULL, NULL, NULL,
     "allot keeps only the server, the login and the default project: allot project set "
     "NAME sets the project, allot login --url URL the server"},
    {"delete", "job", cmd_workload_main, "workload", "delete", "-y", NULL},
    {"delete", NULL, cmd_workload_main, "workload", "delete", "-y", NULL},
    {"logs", NULL, cmd_workload_main, "workload", "logs", NULL, NULL},
    {"suspend", NULL, cmd_workload_main, "workload", "suspend", NULL, NULL},
    {"resume", NULL, cmd_workload_main, "workload", "resume", NULL, NULL},
    {"top", "node", cmd_node_main, "node", "list", NULL, NULL},
    {"top", NULL, NULL, NULL, NULL, NULL, "allot node list shows the nodes and their GPUs"},
    {"bash", NULL, NULL, NULL, NULL, NULL,
     "allot opens no shell in a workload (its pods run on the agents' machines); "
     "allot workload logs NAME -f follows its output"},
    {"exec", NULL, NULL, NULL, NULL, NULL,
     "allot runs no command in a running workload; allot workload logs NAME -f follows "
     "its output"},
    {"attach", NULL, NULL, NULL, NULL, NULL,
     "allot attaches to no workload; allot workload logs NAME -f follows its output"},
    {"submit", NULL, NULL, NULL, NULL, NULL, NULL},   /* by submit_words() */
};

#define N_FORMS ((int)(sizeof(forms) / sizeof(forms[0])))

/* ---- submit ---- */

enum { S_MAP = 1, S_GPU, S_INTERACTIVE, S_PREEMPTIBLE, S_REFUSED };

/* A v1 submit flag: given to v2 in v2's spelling (S_MAP), read (S_GPU,
 * S_INTERACTIVE, S_PREEMPTIBLE) or refused with why. The option ids are
 * the rows' indices + 1, set by submit_words(). */
struct v1_flag {
    struct opt_spec spec;
    int how;
    const char *v2;            /* S_MAP: v2's spelling; S_REFUSED: why */
};

#define SAME(l, k) {{l, 0, k, 0}, S_MAP, "--" l}
#define SHORT(l, s, k, v2) {{l, s, k, 0}, S_MAP, v2}
#define RENAME(l, k, v2) {{l, 0, k, 0}, S_MAP, v2}
#define REFUSED(l, s, k, why) {{l, s, k, 0}, S_REFUSED, why}

static const struct v1_flag submit_flags[] = {
    SHORT("image", 'i', OPT_VALUE, "-i"),
    SHORT("project", 'p', OPT_VALUE, "-p"),
    SHORT("environment", 'e', OPT_VALUE, "-e"),
    SAME("command", OPT_FLAG),
    SAME("name", OPT_VALUE),
    SAME("node-type", OPT_VALUE),
    SAME("working-dir", OPT_VALUE),
    SAME("parallelism", OPT_VALUE),
    SAME("name-prefix", OPT_VALUE),
    SAME("port", OPT_VALUE),
    {{"gpu", 'g', OPT_VALUE, 0}, S_GPU, NULL},
    {{"interactive", 0, OPT_FLAG, 0}, S_INTERACTIVE, NULL},
    {{"preemptible", 0, OPT_FLAG, 0}, S_PREEMPTIBLE, NULL},
    RENAME("cpu", OPT_VALUE, "--cpu-core-request"),
    RENAME("memory", OPT_VALUE, "--cpu-memory-request"),
    RENAME("gpu-memory", OPT_VALUE, "--gpu-memory-request"),
    RENAME("job-name-prefix", OPT_VALUE, "--name-prefix"),
    RENAME("node-pools", OPT_VALUE, "--node-pools"),
    REFUSED("jupyter", 0, OPT_FLAG, "allot starts no notebook server; submit a workspace with "
                                    "the notebook's image and --port"),
    REFUSED("service-type", 0, OPT_VALUE, "allot publishes ports on the node itself (--port)"),
    REFUSED("volume", 'v', OPT_VALUE, "allot mounts no volumes"),
    REFUSED("pvc", 0, OPT_VALUE, "allot mounts no volumes"),
    REFUSED("large-shm", 0, OPT_FLAG, "allot sets no shared memory size"),
    REFUSED("attach", 0, OPT_FLAG, "allot attaches to no workload; allot workload logs -f"),
    REFUSED("tty", 't', OPT_FLAG, "allot attaches to no workload; allot workload logs -f"),
    REFUSED("stdin", 0, OPT_FLAG, "allot attaches to no workload"),
    REFUSED("elastic", 0, OPT_FLAG, "elastic workloads are distributed ones: allot training "
                                    "pytorch submit --min-replicas N --max-replicas M"),
    REFUSED("completions", 0, OPT_VALUE, "allot runs each pod of a training once"),
    REFUSED("backoff-limit", 0, OPT_VALUE, "allot does not restart failed pods"),
    REFUSED("ttl-after-finish", 0, OPT_VALUE, "allot keeps finished workloads until deleted"),
    REFUSED("run-as-user", 0, OPT_FLAG, "pods run as the agent's user"),
    REFUSED("cpu-limit", 0, OPT_VALUE, "allot places by requests and sets no limits"),
    REFUSED("memory-limit", 0, OPT_VALUE, "allot places by requests and sets no limits"),
    REFUSED("host-ipc", 0, OPT_FLAG, "allot's pods are processes of the agent's machine"),
    REFUSED("host-network", 0, OPT_FLAG, "allot's pods are processes of the agent's machine"),
    REFUSED("template", 0, OPT_VALUE, "allot has no submission templates"),
    {{NULL, 0, 0, 0}, 0, NULL},
};

static const struct cli_cmd submit_cmd = {
    "allot submit", "NAME -i IMAGE [--gpu N] [-p PROJECT] [--interactive] [--preemptible] "
                    "[flags] [-- ARGS...]   (runai v1; allot training submit --help)",
    NULL,
};

/* The words being built (borrowed from argv and the tables, or from
 * owned: the split value of v1's --command). */
struct words {
    char *w[MAX_WORDS];
    int n;
    char *owned;
};

static int push(struct words *ws, char *w)
{
    if (ws->n + 1 >= MAX_WORDS)
        return -1;
    ws->w[ws->n++] = w;
    ws->w[ws->n] = NULL;
    return 0;
}


/* --gpu N: whole GPUs as -g N, a fraction as --gpu-portion-request F. */
static int gpu_words(struct words *ws, const char *val)
{
    double g;
    long whole;

    if (cli_parse_int(val, 0, 64, &whole) == 0)
        return push(ws, "-g") || push(ws, (char *)val) ? CLI_FAIL : CLI_OK;
    if (cli_parse_real(val, 0, 1, &g) != 0 || g <= 0 || g >= 1) {
        return cli_usage_error(&submit_cmd, "--gpu wants whole GPUs (1, 2, ...) or a part of "
                                            "one (0.5)");
    }
    return push(ws, "--gpu-portion-request") || push(ws, (char *)val) ? CLI_FAIL : CLI_OK;
}

/* One v1 submit flag into v2 words (S_INTERACTIVE and S_PREEMPTIBLE are
 * read by submit_words()). */
static int flag_words(struct words *ws, const struct opt_hit *h)
{
    const struct v1_flag *f = &submit_flags[h->id - 1];

    switch (f->how) {
    case S_GPU: return gpu_words(ws, h->val);
    case S_REFUSED:
        return cli_usage_error(&submit_cmd, "the runai v1 flag --%s is not supported: %s",
                               f->spec.lng, f->v2);
    case S_MAP:
        return push(ws, (char *)f->v2) || (h->val && push(ws, (char *)h->val)) ? CLI_FAIL
                                                                              : CLI_OK;
    }
    return CLI_OK;
}

/* Whether the flag named lng was given. */
static int has_how_flag(const struct opts *o, const char *lng)
{
    int i;

    for (i = 0; i < o->n_hits; i++)
        if (strcmp(submit_flags[o->hits[i].id - 1].spec.lng, lng) == 0)
            return 1;
    return 0;
}

static int has_how(const struct opts *o, int how)
{
    int i;

    for (i = 0; i < o->n_hits; i++)
        if (submit_flags[o->hits[i].id - 1].how == how)
            return 1;
    return 0;
}

/* v1's --command took the command line as its value (`--command "python
 * train.py"`, `--command=python`); v2's --command is a flag that makes the
 * words after "--" the command. The word after --command is taken as its
 * value when it holds a space or when no "--" comes after it. The pair
 * is removed from argv (*argc shrinks) and the value returned, or NULL. */
static const char *command_value(int *argc, char **argv)
{
    const char *val = NULL;
    int i, j, taken = 0, rest = 0;

    for (i = 1; i < *argc && !rest; i++) {
        rest = strcmp(argv[i], "--") == 0;
        if (strncmp(argv[i], "--command=", 10) == 0) {
            val = argv[i] + 10;
            taken = 1;
        } else if (strcmp(argv[i], "--command") == 0 && i + 1 < *argc &&
                   argv[i + 1][0] != '-') {
            for (j = i + 2; j < *argc && strcmp(argv[j], "--") != 0; j++)
                ;
            if (strchr(argv[i + 1], ' ') || j == *argc) {
                val = argv[i + 1];
                taken = 2;
            }
        }
        if (taken) {
            memmove(argv + i, argv + i + taken, (size_t)(*argc - i - taken) * sizeof(*argv));
            *argc -= taken;
            argv[*argc] = NULL;
            return val;
        }
    }
    return NULL;
}

/* Splits a command line into ws->owned as a shell would: words between
 * blanks, 'single' and "double" quotes, backslash escapes. 0, or -1 on
 * an open quote or no memory. */
static int split_words(struct words *ws, const char *line)
{
    char *out = malloc(strlen(line) + 1), *w = NULL;
    char quote = 0;

    if (!out)
        return -1;
    ws->owned = out;
    for (; *line; line++) {
        char ch = *line;
        if (!quote && (ch == ' ' || ch == '\t' || ch == '\n')) {
            if (w && (*out++ = 0, push(ws, w) != 0))
                return -1;
            w = NULL;
            continue;
        }
        if (!w)
            w = out;
        if (quote != '\'' && ch == '\\' && line[1] && (quote != '"' || strchr("\"\\$`", line[1])))
            *out++ = *++line;
        else if (!quote && (ch == '\'' || ch == '"'))
            quote = ch;
        else if (quote && ch == quote)
            quote = 0;
        else
            *out++ = ch;
    }
    *out++ = 0;
    return quote || (w && push(ws, w) != 0) ? -1 : 0;
}

/* Step 2 for submit: argv from "submit" on into ws; *run is the group. */
static int submit_words(int argc, char **argv, struct words *ws, int (**run)(int, char **))
{
    struct opt_spec spec[64];
    struct opts o;
    char err[256];
    const char *cmdline = command_value(&argc, argv);
    int i, n = 0, interactive, rc;

    for (n = 0; submit_flags[n].spec.lng && n + 1 < 64; n++) {
        spec[n] = submit_flags[n].spec;
        spec[n].id = n + 1;
    }
    spec[n] = (struct opt_spec){NULL, 0, 0, 0};
    rc = opts_parse(spec, argc - 1, argv + 1, &o, err, sizeof(err));
    if (rc != 0) {
        opts_free(&o);
        return rc == -2 ? cli_fail("out of memory") : cli_usage_error(&submit_cmd, "%s", err);
    }
    interactive = has_how(&o, S_INTERACTIVE);
    *run = interactive ? cmd_workspace_main : cmd_training_main;
    rc = push(ws, interactive ? "workspace" : "training") || push(ws, "submit") ? CLI_FAIL
                                                                                 : CLI_OK;
    for (i = 0; rc == CLI_OK && i < o.n_pos; i++)
        rc = push(ws, o.pos[i]) ? CLI_FAIL : CLI_OK;
    for (i = 0; rc == CLI_OK && i < o.n_hits; i++)
        rc = flag_words(ws, &o.hits[i]);
    if (rc == CLI_OK && has_how(&o, S_PREEMPTIBLE))
        rc = (interactive ? push(ws, "--priority") || push(ws, "interactive-preemptible")
                          : push(ws, "--preemptibility") || push(ws, "preemptible"))
                 ? CLI_FAIL : CLI_OK;
    if (rc == CLI_OK && o.help)
        rc = push(ws, "--help") ? CLI_FAIL : CLI_OK;
    if (rc == CLI_OK && cmdline && !has_how_flag(&o, "command"))
        rc = push(ws, "--command") ? CLI_FAIL : CLI_OK;
    if (rc == CLI_OK && (o.has_rest || cmdline))
        rc = push(ws, "--") ? CLI_FAIL : CLI_OK;
    if (rc == CLI_OK && cmdline && split_words(ws, cmdline) != 0)
        rc = cli_usage_error(&submit_cmd, "--command \"%s\": a quote is not closed", cmdline);
    for (i = 0; rc == CLI_OK && o.has_rest && i < o.n_rest; i++)
        rc = push(ws, o.rest[i]) ? CLI_FAIL : CLI_OK;
    opts_free(&o);
    if (rc == CLI_FAIL)
        return cli_fail("too many words on the command line");
    return rc;
}

/* ---- the other forms ---- */

static int object_is(const char *word, const char *object)
{
    size_t n = strlen(object);

    return strncmp(word, object, n) == 0 && (!word[n] || (word[n] == 's' && !word[n + 1]));
}

/* Step 1: the form of argv (NULL: not a v1 word). */
static const struct v1_form *form_of(int argc, char **argv)
{
    int i;

    for (i = 0; i < N_FORMS; i++)
        if (strcmp(argv[0], forms[i].word) == 0 &&
            (!forms[i].object || (argc > 1 && object_is(argv[1], forms[i].object))))
            return &forms[i];
    return NULL;
}

/* Step 2 for the others: the v2 words, then v1's after the object word. */
static int form_words(const struct v1_form *f, int argc, char **argv, struct words *ws)
{
    int i = f->object ? 2 : 1, bad = push(ws, (char *)f->group) || push(ws, (char *)f->verb);

    for (; !bad && i < argc; i++)
        bad = push(ws, strcmp(argv[i], "--all-projects") == 0 ? "-A" : argv[i]);
    if (!bad && f->extra)
        bad = push(ws, (char *)f->extra);
    return bad ? cli_fail("too many words on the command line") : CLI_OK;
}

/* Step 3: the one-line notice, with the words quoted as a shell reads them. */
static void notice(const char *v1_word, const struct words *ws)
{
    int i;

    fprintf(stderr, "allot: '%s' is a runai v1 form; running: allot", v1_word);
    for (i = 0; i < ws->n; i++) {
        const char *w = ws->w[i];
        if (w[0] && !w[strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789-_./:=,@%+")]) {
            fprintf(stderr, " %s", w);
            continue;
        }
        fputs(" '", stderr);
        for (; *w; w++) {
            if (*w == '\'')
                fputs("'\\'", stderr);
            fputc(*w, stderr);
        }
        fputc('\'', stderr);
    }
    fputc('\n', stderr);
}

const char *v1_nearest(const char *word, int *dist)
{
    return cli_nearest(word, forms, sizeof(forms[0]), N_FORMS, dist);
}

int v1_main(int argc, char **argv)
{
    const struct v1_form *f = form_of(argc, argv);
    int (*run)(int, char **) = f ? f->run : NULL;
    struct words ws = {{NULL}, 0, NULL};
    char name[64];
    struct cli_cmd refused = {name, "COMMAND ...   (allot --help lists allot's commands)", NULL};
    int rc;

    if (!f)
        return -1;
    if (strcmp(f->word, "submit") == 0)
        rc = submit_words(argc, argv, &ws, &run);
    else if (!f->run) {
        snprintf(name, sizeof(name), "allot %s", argv[0]);
        return cli_usage_error(&refused, "the runai v1 command '%s%s%s' is not supported: %s",
                               argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "",
                               f->refusal);
    } else
        rc = form_words(f, argc, argv, &ws);
    if (rc == CLI_OK) {
        notice(argv[0], &ws);
        rc = run(ws.n, ws.w);
    }
    free(ws.owned);
    return rc;
}
