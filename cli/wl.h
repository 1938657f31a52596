/*
 * wl.h: the workload command groups (training, workspace, inference,
 * distributed, workload) and their verbs, split over cmd_workload.c
 * (dispatch, list, delete, suspend, resume, logs), cmd_submit.c and
 * cmd_describe.c.
 */
#ifndef ALLOT_WL_H
#define ALLOT_WL_H

#include "cmd.h"

enum wl_kind { WL_ANY = 0, WL_TRAINING, WL_WORKSPACE, WL_INFERENCE, WL_DISTRIBUTED };

/* A workload noun as typed. */
struct wl_noun {
    const char *words;         /* "training", "training pytorch", "workload" */
    const char *noun;          /* the kind in messages: "training" */
    const char *type;          /* the API's type word ("Training"), NULL for any */
    const char *route;         /* the submit route, NULL when it has none */
    const char *framework;     /* a distributed framework the noun implies */
    int kind;                  /* enum wl_kind */
};

/* A verb's name as typed ("allot training submit"), for messages. */
struct wl_cmd {
    char name[96];
    struct cli_cmd cmd;
};
void wl_cmd_init(struct wl_cmd *w, const struct wl_noun *n, const char *verb, const char *usage,
                 const char *help);

/* The project a verb works in: -p, else the default project, else NULL
 * (every project the caller may read). */
const char *wl_project(struct client *c, const char *flag);

int wl_submit(const struct wl_noun *n, int argc, char **argv);
int wl_describe(const struct wl_noun *n, int argc, char **argv);

#endif
