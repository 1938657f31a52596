/*
 * cmd_describe.c: `allot training|workspace|inference|distributed|
 * workload describe NAME`: one workload in four sections, as the runai
 * CLI splits it:
 *
 *   General            who, where, status, and for a pending workload
 *                      the scheduler's reason with its numbers
 *                      (phaseReason and phaseMessage);
 *   Compute Resources  requested against allocated;
 *   Pods               each pod's status, node, pool and GPU devices, and
 *                      what its agent measures of them (utilisation,
 *                      memory its processes hold);
 *   Events             oldest first: submitted, placed, preempted (by
 *                      whom and why), suspended, ...
 *
 * -o json and -o yaml print {workload, pods, events} as the API gave
 * them (events oldest first).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "wl.h"

enum {
    O_PROJECT = 1, O_OUTPUT, O_EVENT_LIMIT, O_GENERAL, O_COMPUTE, O_PODS, O_EVENTS,
    O_SHOW_EVENTS,
};

#define S_GENERAL 1u
#define S_COMPUTE 2u
#define S_PODS 4u
#define S_EVENTS 8u

static const struct opt_spec describe_opts[] = {
    {"project", 'p', OPT_VALUE, O_PROJECT},
    {"output", 'o', OPT_VALUE, O_OUTPUT},
    {"event-limit", 0, OPT_VALUE, O_EVENT_LIMIT},
    /* the parts to show */
    {"general", 0, OPT_FLAG, O_GENERAL}, {"compute", 0, OPT_FLAG, O_COMPUTE},
    {"pods", 0, OPT_FLAG, O_PODS}, {"events", 0, OPT_FLAG, O_EVENTS},
    {"show-events", 0, OPT_FLAG, O_SHOW_EVENTS},
    {NULL, 0, 0, 0},
};

static const char describe_help[] =
    "Shows one workload: general facts and why it is pending, compute requested\n"
    "against allocated, its pods and nodes, and its events (who preempted it and why).\n\n"
    "  -p, --project NAME      the workload's project\n"
    "  -o, --output FORMAT     table (the default), json or yaml\n"
    "  --event-limit N         the last N events (default 50)\n"
    "  --general, --compute, --pods, --events\n"
    "                          only these sections\n"
    "  --show-events           the events as well (runai v1's spelling; without a\n"
    "                          section flag every section is shown anyway)\n";

struct describe_args {
    const char *name, *project;
    int format;
    long event_limit;
    unsigned sections;
    int show_events;           /* --show-events: events too, with the others */
};

struct described {
    json_t *w;                 /* the generic workload object */
    json_t *pods;
    json_t *events;            /* oldest first */
    int more_events;           /* the server has older ones */
};

/* ---- arguments ---- */

static int describe_hit(const struct cli_cmd *cmd, const struct opt_hit *h,
                        struct describe_args *a)
{
    switch (h->id) {
    case O_PROJECT: a->project = h->val; break;
    case O_OUTPUT:
        if (strcmp(h->val, "table") == 0)
            a->format = OUT_TABLE;
        else if (strcmp(h->val, "json") == 0)
            a->format = OUT_JSON;
        else if (strcmp(h->val, "yaml") == 0)
            a->format = OUT_YAML;
        else
            return cli_usage_error(cmd, "-o is table, json or yaml");
        break;
    case O_EVENT_LIMIT:
        if (cli_parse_int(h->val, 1, 500, &a->event_limit) != 0)
            return cli_usage_error(cmd, "--event-limit wants a number from 1 to 500");
        break;
    case O_GENERAL: a->sections |= S_GENERAL; break;
    case O_COMPUTE: a->sections |= S_COMPUTE; break;
    case O_PODS: a->sections |= S_PODS; break;
    case O_EVENTS: a->sections |= S_EVENTS; break;
    case O_SHOW_EVENTS: a->show_events = 1; break;
    }
    return CLI_OK;
}

static int describe_in(const struct cli_cmd *cmd, const struct opts *o, struct describe_args *a)
{
    int i, rc = CLI_OK;

    memset(a, 0, sizeof(*a));
    a->event_limit = 50;
    for (i = 0; rc == CLI_OK && i < o->n_hits; i++)
        rc = describe_hit(cmd, &o->hits[i], a);
    if (rc != CLI_OK)
        return rc;
    if (o->n_pos != 1 || o->has_rest)
        return cli_usage_error(cmd, o->n_pos > 1 ? "one workload at a time" : "NAME is missing");
    a->name = o->pos[0];
    if (!a->sections)
        a->sections = S_GENERAL | S_COMPUTE | S_PODS | S_EVENTS;
    if (a->show_events)
        a->sections |= S_EVENTS;
    return CLI_OK;
}

/* ---- fetching ---- */

static int fetch_events(struct client *c, const char *id, long limit, struct described *d)
{
    char *path = cli_strf("/api/v1/workloads/%s/events?sortOrder=desc&limit=%ld", id, limit);
    json_t *page = NULL, *newest_first;
    size_t i, n;
    int rc;

    if (!path)
        return cli_fail("out of memory");
    rc = client_json(c, "GET", path, NULL, &page);
    newest_first = json_object_get(page, "events");
    d->events = json_array();
    n = json_array_size(newest_first);
    for (i = n; rc == CLI_OK && i > 0; i--)
        json_array_append(d->events, json_array_get(newest_first, i - 1));
    d->more_events = json_object_get(page, "next") != NULL;
    json_decref(page);
    free(path);
    return rc;
}

static int fetch(struct client *c, const struct wl_noun *n, const struct describe_args *a,
                 struct described *d)
{
    struct wl_key k = {a->name, wl_project(c, a->project), n->type, n->noun};
    json_t *page = NULL;
    char *path = NULL;
    int rc = find_workload(c, &k, &d->w);

    if (rc == CLI_OK) {
        path = cli_strf("/api/v1/workloads/%s/pods", jstr(d->w, "id", ""));
        rc = path ? client_json(c, "GET", path, NULL, &page) : cli_fail("out of memory");
    }
    if (rc == CLI_OK) {
        d->pods = json_incref(json_object_get(page, "pods"));
        if (!d->pods)
            d->pods = json_array();
        rc = fetch_events(c, jstr(d->w, "id", ""), a->event_limit, d);
    }
    json_decref(page);
    free(path);
    return rc;
}

/* ---- the sections ---- */

/* "2026-11-21T14:19:36.188Z" -> "2026-11-21T14:19:36Z" */
static void add_time(struct table *t, const char *iso)
{
    const char *dot = iso ? strchr(iso, '.') : NULL;

    if (!iso)
        table_add(t, "-");
    else if (dot)
        table_add(t, "%.*sZ", (int)(dot - iso), iso);
    else
        table_add(t, "%s", iso);
}

static void add_field(struct table *t, const char *key, const char *value)
{
    table_add(t, "%s:", key);
    table_add(t, "%s", value && value[0] ? value : "-");
}

static void add_command(struct table *t, const json_t *spec)
{
    const char *cmd = jstr(spec, "command", ""), *args = jstr(spec, "args", "");

    table_add(t, "Command:");
    if (!cmd[0] && !args[0])
        table_add(t, "- (the image's own)");
    else
        table_add(t, "%s%s%s", cmd, cmd[0] && args[0] ? " " : "", args);
}

/* Appends what fmt makes to the list in buf (size bytes, *used of them
 * taken): 0, or -1 when it does not fit (then *used stays, and the list
 * ends there). */
static int append(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - *used)
        return -1;
    *used += (size_t)n;
    return 0;
}

static void add_pools(struct table *t, const json_t *w)
{
    const json_t *pools = json_object_get(w, "requestedNodePools");
    char buf[512] = "";
    size_t i, used = 0;
    json_t *p;

    json_array_foreach(pools, i, p) {
        if (append(buf, sizeof(buf), &used, "%s%s", i ? "," : "",
                   json_string_value(p) ? json_string_value(p) : "?") != 0)
            break;
    }
    add_field(t, "Node pools", used ? buf : "any");
}

/* Ports: "8080 on node port 30888, ..." from the spec; URLs: where the
 * pods answer (agents' nodes only). Left out when the workload has none. */
static void add_ports(struct table *t, const json_t *w)
{
    const json_t *ports = json_object_get(json_object_get(w, "spec"), "ports");
    const json_t *urls = json_object_get(w, "urls"), *p;
    char buf[512];
    size_t i, used = 0;

    json_array_foreach(ports, i, p) {
        long c = (long)jnum(p, "container", 0), e = (long)jnum(p, "external", (double)c);

        if (append(buf, sizeof(buf), &used, "%s%ld on node port %ld", i ? ", " : "", c, e) != 0)
            break;
    }
    if (used)
        add_field(t, "Ports", buf);
    used = 0;
    json_array_foreach(urls, i, p) {
        if (append(buf, sizeof(buf), &used, "%s%s", i ? " " : "",
                   json_string_value(p) ? json_string_value(p) : "") != 0)
            break;
    }
    if (used)
        add_field(t, "URLs", buf);
}

static void general(const json_t *w)
{
    static const char *const none[] = {"", ""};
    const char *phase = jstr(w, "phase", "?"), *reason = jstr(w, "phaseReason", "");
    const char *msg = jstr(w, "phaseMessage", "");

    /* phaseReason holds only Run:ai's two reasons; the others are the
     * reason of the workload's condition */
    if (!reason[0])
        reason = jstr(json_array_get(json_object_get(w, "conditions"), 0), "reason", "");
    struct table t;

    table_init(&t, 2, none);
    add_field(&t, "Name", jstr(w, "name", NULL));
    add_field(&t, "Id", jstr(w, "id", NULL));
    add_field(&t, "Type", jstr(w, "type", NULL));
    add_field(&t, "Project", jstr(w, "projectName", NULL));
    add_field(&t, "Department", jstr(w, "departmentName", NULL));
    add_field(&t, "Status", phase);
    if (reason[0] || msg[0]) {
        table_add(&t, "%s:", strcmp(phase, "Pending") == 0 ? "Pending reason" : "Reason");
        table_add(&t, "%s%s%s", reason, reason[0] && msg[0] ? ": " : "", msg);
    }
    table_add(&t, "Priority:");
    table_add(&t, "%s (%.0f)", jstr(w, "priorityClassName", "?"), jnum(w, "priority", 0));
    add_field(&t, "Preemptible", json_is_true(json_object_get(w, "preemptible")) ? "Yes" : "No");
    add_field(&t, "Submitted by", jstr(w, "submittedBy", NULL));
    table_add(&t, "Created:");
    add_time(&t, jstr(w, "createdAt", NULL));
    add_field(&t, "Image", jstr(json_array_get(json_object_get(w, "images"), 0), "", NULL));
    add_command(&t, json_object_get(w, "spec"));
    add_pools(&t, w);
    add_ports(&t, w);
    printf("General\n");
    table_print(&t, stdout, 0, "  ");
    table_free(&t);
}

static void compute(const json_t *w)
{
    static const char *const heads[] = {"Resource", "Requested", "Allocated"};
    long number = (long)jnum(w, "requestedPods.number", 0);
    long min = (long)jnum(w, "requestedPods.min", (double)number);
    const char *mem = jstr(w, "spec.compute.cpuMemoryRequest", "");
    struct table t;

    table_init(&t, 3, heads);
    table_add(&t, "GPU devices");
    table_add(&t, "%.2f", jnum(w, "workloadRequestedResources.gpu.request", 0));
    table_add(&t, "%.2f", jnum(w, "allocatedResources.gpu", 0));
    table_add(&t, "CPU cores");
    table_add(&t, "%.2f", jnum(w, "workloadRequestedResources.cpu.request", 0));
    table_add(&t, "%.2f", jnum(w, "allocatedResources.cpu", 0));
    table_add(&t, "CPU memory");
    table_add(&t, "%s%s", mem[0] ? mem : "-", mem[0] ? " per pod" : "");
    table_add(&t, "%s", jstr(w, "allocatedResources.cpuMemory", "-"));
    table_add(&t, "Pods");
    if (min != number)
        table_add(&t, "%ld-%ld", min, number);
    else
        table_add(&t, "%ld", number);
    table_add(&t, "%ld", (long)jnum(w, "runningPods", 0));
    printf("\nCompute Resources\n");
    table_print(&t, stdout, 1, "  ");
    table_free(&t);
}

static void add_devices(struct table *t, const json_t *devices)
{
    char buf[256] = "";
    size_t i, used = 0;
    json_t *d;

    json_array_foreach(devices, i, d) {
        if (append(buf, sizeof(buf), &used, "%s%lld", i ? "," : "",
                   (long long)json_integer_value(d)) != 0)
            break;
    }
    table_add(t, "%s", used ? buf : "-");
}

/* What its agent measures of a pod's GPUs: "37%" and "2048 MiB", or "-". */
static void add_usage(struct table *t, const json_t *usage)
{
    const json_t *util = json_object_get(usage, "utilization");
    const json_t *mem = json_object_get(usage, "memoryUsedBytes");

    if (json_is_number(util))
        table_add(t, "%.0f%%", json_number_value(util));
    else
        table_add(t, "-");
    if (json_is_integer(mem))
        table_add(t, "%lld MiB", (long long)(json_integer_value(mem) / 1048576));
    else
        table_add(t, "-");
}

static void pods(const json_t *list)
{
    static const char *const heads[] = {"Pod", "Status", "Node", "Node Pool", "GPUs",
                                        "Devices", "GPU Util", "GPU Memory"};
    struct table t;
    json_t *p;
    size_t i;

    table_init(&t, 8, heads);
    json_array_foreach(list, i, p) {
        table_add(&t, "%s", jstr(p, "name", "?"));
        table_add(&t, "%s", jstr(p, "k8sPhase", "?"));
        table_add(&t, "%s", jstr(p, "nodeName", "-"));
        table_add(&t, "%s", jstr(p, "currentNodePool", "-"));
        table_add(&t, "%.2f", jnum(p, "allocatedResources.gpu", 0));
        add_devices(&t, json_object_get(p, "gpuDevices"));
        add_usage(&t, json_object_get(p, "gpuUsage"));
    }
    printf("\nPods\n");
    if (json_array_size(list) == 0)
        printf("  none\n");
    else
        table_print(&t, stdout, 1, "  ");
    table_free(&t);
}

static void events(const json_t *list, int more, long limit)
{
    static const char *const heads[] = {"Time", "Type", "Reason", "Message"};
    struct table t;
    json_t *e;
    size_t i;

    table_init(&t, 4, heads);
    json_array_foreach(list, i, e) {
        add_time(&t, jstr(e, "createdAt", NULL));
        table_add(&t, "%s", jstr(e, "type", "?"));
        table_add(&t, "%s", jstr(e, "reason", "?"));
        table_add(&t, "%s", jstr(e, "message", ""));
    }
    printf("\nEvents\n");
    if (json_array_size(list) == 0)
        printf("  none\n");
    else
        table_print(&t, stdout, 1, "  ");
    if (more)
        printf("  (the last %ld; --event-limit N shows more)\n", limit);
    table_free(&t);
}

static int print_described(const struct described *d, const struct describe_args *a)
{
    json_t *doc;

    if (a->format != OUT_TABLE) {
        doc = json_pack("{s:O, s:O, s:O}", "workload", d->w, "pods", d->pods, "events",
                        d->events);
        if (!doc)
            return cli_fail("out of memory");
        out_document(stdout, a->format, doc);
        json_decref(doc);
        return CLI_OK;
    }
    if (a->sections & S_GENERAL)
        general(d->w);
    if (a->sections & S_COMPUTE)
        compute(d->w);
    if (a->sections & S_PODS)
        pods(d->pods);
    if (a->sections & S_EVENTS)
        events(d->events, d->more_events, a->event_limit);
    return CLI_OK;
}

int wl_describe(const struct wl_noun *n, int argc, char **argv)
{
    struct described d = {NULL, NULL, NULL, 0};
    struct describe_args a;
    struct client *c = NULL;
    struct wl_cmd w;
    struct opts o;
    int rc;

    wl_cmd_init(&w, n, "describe", "NAME [-p PROJECT] [-o table|json|yaml] [--event-limit N] "
                                   "[--general] [--compute] [--pods] [--events] [--show-events]",
                describe_help);
    rc = cmd_parse(&w.cmd, describe_opts, argc, argv, &o);
    if (rc == CLI_OK && o.help)
        rc = cli_help(&w.cmd);
    else if (rc == CLI_OK && (rc = describe_in(&w.cmd, &o, &a)) == CLI_OK &&
             (rc = client_open(&c, CLIENT_LOGGED_IN)) == CLI_OK &&
             (rc = fetch(c, n, &a, &d)) == CLI_OK)
        rc = print_described(&d, &a);
    json_decref(d.w);
    json_decref(d.pods);
    json_decref(d.events);
    client_close(c);
    opts_free(&o);
    return rc;
}
