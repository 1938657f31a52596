/*
 * config.c: allotd's options, from an optional config file and then the
 * command line (flags win).
 *
 * The config file holds one "key = value" per line, the keys being the
 * long flag names without dashes ("listen = 127.0.0.1:8080",
 * "simulate-nodes = 2x2:a100"); '#' starts a comment. Both go through
 * one table of the options, options[] (common/config_file.h).
 *
 * Invariant: after a successful parse every field is set and in range;
 * TLS options do not exist (TLS ends at a reverse proxy).
 */
#include "api.h"
#include "allot_version.h"
#include "config_file.h"
#include "db_agent.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(void)
{
    printf("usage: allotd [options]\n"
           "  --db PATH|URI             database file (default allot.db; with --demo\n"
           "                            allot-demo.db), or a PostgreSQL URI (postgresql://...,\n"
           "                            postgres://...; docs/allotd.md);\n"
           "                            it must exist: allotd creates one only with --init\n"
           "  --init                    create a new database (and the admin user), then exit\n"
           "  --listen ADDR:PORT        where to listen (default 127.0.0.1:8080; port 0 picks one)\n"
           "  --demo                    fresh database (replacing the demo one), bootstrap\n"
           "                            admin, simulated nodes\n"
           "  --simulate-nodes NxG[:P[:T]] N simulated machines with G GPUs in pool P, of node\n"
           "                            type T (repeatable; 0 for none; --demo defaults to 2x2)\n"
           "  --schedule-period-ms N    scheduling period (default 1000)\n"
           "  --sample-period-ms N      allocation samples for metrics (default 15000)\n"
           "  --threads N               HTTP worker threads (default 128)\n"
           "  --request-timeout-ms N    a request head must arrive within N ms, a body\n"
           "                            within 5N (default 2000)\n"
           "  --retention-days N        keep deleted workloads (events, pod runs, logs) N days,\n"
           "                            then purge them; 0 keeps them (default 30)\n"
           "  --audit-retention-days N  keep audit log rows N days; 0 keeps them (default 90)\n"
           "  --rate-limit N            requests per second per client address (default 100;\n"
           "                            0 off)\n"
           "  --user-rate-limit N       requests per second per signed-in user or service\n"
           "                            account, whatever its addresses (default: the\n"
           "                            --rate-limit value; 0 off)\n"
           "  --trusted-proxy CIDR[,CIDR...]  peers whose client-address header names the\n"
           "                            client (default none: the header is ignored)\n"
           "  --client-address-header NAME  that header: X-Forwarded-For (default),\n"
           "                            Forwarded (RFC 7239) or another list of addresses\n"
           "  --secret-checks N         password and secret checks run at once (default 2)\n"
           "  --secret-hash-cost N      yescrypt cost of the passwords and secrets stored from\n"
           "                            now on, 1 to 11, each step twice the time (default 5)\n"
           "  --agent-lease-ms N        an agent whose heartbeats get no answer this long\n"
           "                            stops its pods (default 10000)\n"
           "  --agent-lease-margin-ms N allotd requeues a silent node's pods only after its\n"
           "                            lease and this margin (default 5000)\n"
           "  --max-pending-per-project N  submissions are refused (429) while the project\n"
           "                            has N Pending workloads (default 10000; 0 no cap)\n"
           "  --max-pending-per-user N  the same per user who submits (default 5000; 0 no cap)\n"
           "  --db-statement-timeout-ms N  PostgreSQL --db: the server cancels a statement\n"
           "                            running longer (default 30000; 0 no limit)\n"
           "  --read-max-age-ms N       workloads read from memory are at most N ms older\n"
           "                            than the database (default 1000; 0 every read from\n"
           "                            the database)\n"
           "  --leader-lease-ms N       replicas on one PostgreSQL --db: the leader lease\n"
           "                            (default 3000; docs/ha.md)\n"
           "  --leader-renew-ms N       the leader extends it this often (default 1000; less\n"
           "                            than 9/10 of the lease)\n"
           "  --leader-ask-ms N         the others ask for it this often (default 500)\n"
           "  --rendezvous-ports FIRST-LAST  the node ports distributed workloads' pods\n"
           "                            meet on (default 30000-39999; docs/agent.md)\n"
           "  --key-file PATH           token signing key (default DB path + .key; allot.key with\n"
           "                            a PostgreSQL --db)\n"
           "  --secrets-key-file PATH   the key sealing stored secrets, made by --init\n"
           "                            (default DB path + .secrets.key)\n"
           "  --token-ttl SECONDS       access token lifetime, 1 to 86400 (default 3600)\n"
           "  --token-leeway SECONDS    clock difference allowed on a token's expiry and\n"
           "                            start, 0 to 300 (default 30)\n"
           "  --metrics-listen ADDR:PORT  also serve /metrics there, without a token (none\n"
           "                            by default; elsewhere /metrics takes a token with a\n"
           "                            system-wide role)\n"
           "  --port-file PATH          write the bound port there once listening\n"
           "  --web-root DIR            the dashboard's files (default: the installed or\n"
           "                            source web/ folder)\n"
           "  --config FILE             read options from FILE first\n"
           "  --version                 print the version and exit\n");
}

/* Copies the field of s up to ':' or the end into out (len bytes); the
 * rest, or NULL after the last field. */
static const char *sim_field(const char *s, char *out, size_t len, int *bad)
{
    const char *c = strchr(s, ':');
    size_t n = c ? (size_t)(c - s) : strlen(s);

    if (n >= len)
        *bad = 1;
    else
        memcpy(out, s, n), out[n] = 0;
    return c ? c + 1 : NULL;
}

/* POOL[:TYPE[:MEMORY]] after NxG: a pool (required once the colon is
 * there), an optional node type, the memory of each device (a quantity
 * with a unit: 40G, 80Gi). */
static int sim_fields(const char *s, struct api_sim_spec *out)
{
    char mem[32] = "";
    int bad = 0;

    s = sim_field(s, out->pool, sizeof(out->pool), &bad);
    if (s)
        s = sim_field(s, out->node_type, sizeof(out->node_type), &bad);
    if (s) {
        s = sim_field(s, mem, sizeof(mem), &bad);
        if (!mem[0] || strspn(mem, "0123456789.") == strlen(mem) ||
            api_quantity_mib(mem, &out->gpu_memory_mib) != 0 || out->gpu_memory_mib <= 0)
            bad = 1;
    }
    return bad || s || !out->pool[0] ? -1 : 0;
}

int api_sim_parse(const char *s, struct api_sim_spec *out)
{
    char *end;
    long m, g;

    memset(out, 0, sizeof(*out));
    snprintf(out->pool, sizeof(out->pool), "default");
    if (strcmp(s, "0") == 0)
        return 0;
    m = strtol(s, &end, 10);
    if (end == s || *end != 'x' || m < 0 || m > 10000)
        return -1;
    s = end + 1;
    g = strtol(s, &end, 10);
    if (end == s || g < 0 || g > 64)
        return -1;
    out->gpu_memory_mib = API_SIM_GPU_MEMORY_MIB;
    if (*end && (*end != ':' || sim_fields(end + 1, out) != 0))
        return -1;
    out->machines = (int)m;
    out->gpus = (int)g;
    return 0;
}

/* An HTTP header name: letters, digits and "-", 1 to len - 1 of them. */
static int header_name(const char *v, char *out, size_t len)
{
    size_t n = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-");

    if (n == 0 || v[n] || n >= len)
        return -1;
    memcpy(out, v, n + 1);
    return 0;
}

static int set_trusted_proxy(void *target, const char *v)
{
    struct api_client_trust *t = &((struct api_config *)target)->trust;

    return api_cidrs_parse(v, t->trusted, API_MAX_TRUSTED, &t->n_trusted);
}

static int set_address_header(void *target, const char *v)
{
    struct api_client_trust *t = &((struct api_config *)target)->trust;

    return header_name(v, t->header, sizeof(t->header));
}

/* FIRST-LAST: unprivileged ports, FIRST at most LAST. */
static int set_rendezvous_ports(void *target, const char *v)
{
    struct api_config *cfg = target;
    char *end;
    long first = strtol(v, &end, 10), last;

    if (v[0] < '0' || v[0] > '9' || *end != '-' || end[1] < '0' || end[1] > '9')
        return -1;
    last = strtol(end + 1, &end, 10);
    if (*end || first < 1024 || last > 65535 || first > last)
        return -1;
    cfg->rendezvous_first = (int)first;
    cfg->rendezvous_last = (int)last;
    return 0;
}

/* One more simulated machine spec (repeatable; "0" for none). */
static int set_simulate_nodes(void *target, const char *v)
{
    struct api_config *cfg = target;
    struct api_sim_spec s;

    cfg->sims_given = 1;
    if (api_sim_parse(v, &s) != 0 || cfg->n_sims >= API_MAX_SIM)
        return -1;
    if (s.machines > 0)
        cfg->sims[cfg->n_sims++] = s;
    return 0;
}

#define C struct api_config
/* allotd's options, from a config file or the command line; --config,
 * --init and --help stand on the command line only. */
static const struct cf_option options[] = {
    CF_FLAG_ROW(C, "demo", demo),
    CF_STR_ROW(C, "db", db_path, 0),
    CF_STR_ROW(C, "listen", listen, 1), /* an address is needed: no default stands for "" */
    CF_STR_ROW(C, "key-file", key_file, 0),
    CF_STR_ROW(C, "secrets-key-file", secrets_key_file, 0),
    CF_STR_ROW(C, "metrics-listen", metrics_listen, 0),
    CF_STR_ROW(C, "port-file", port_file, 0),
    CF_STR_ROW(C, "web-root", web_root, 0),
    CF_INT_ROW(C, "schedule-period-ms", schedule_period_ms, 1000, 1, 3600000),
    CF_INT_ROW(C, "sample-period-ms", sample_period_ms, 15000, 10, 3600000),
    CF_INT_ROW(C, "retention-days", retention_days, 30, 0, 36500),
    CF_INT_ROW(C, "audit-retention-days", audit_retention_days, 90, 0, 36500),
    CF_INT_ROW(C, "threads", threads, 128, 2, 1024),
    CF_INT_ROW(C, "request-timeout-ms", request_timeout_ms, 2000, 100, 600000),
    CF_INT_ROW(C, "rate-limit", rate_limit, 100, 0, 10000000),
    CF_INT_ROW(C, "user-rate-limit", user_rate_limit, -1, 0, 10000000),
    CF_PARSE_ROW("trusted-proxy", set_trusted_proxy),
    CF_PARSE_ROW("client-address-header", set_address_header),
    CF_INT_ROW(C, "secret-checks", secret_checks, 2, 1, 1024),
    CF_INT_ROW(C, "secret-hash-cost", secret_hash_cost, 5, 1, 11),
    CF_INT_ROW(C, "agent-lease-ms", agent_lease_ms, 10000, 300, 3600000),
    CF_INT_ROW(C, "agent-lease-margin-ms", agent_margin_ms, 5000, 100, 3600000),
    CF_INT_ROW(C, "max-pending-per-project", max_pending_project, 10000, 0, 100000000),
    CF_INT_ROW(C, "max-pending-per-user", max_pending_user, 5000, 0, 100000000),
    CF_INT_ROW(C, "db-statement-timeout-ms", db_statement_ms, -1, 0, 86400000),
    CF_INT_ROW(C, "read-max-age-ms", read_max_age_ms, API_READ_MAX_AGE_MS, 0, 60000),
    CF_INT_ROW(C, "leader-lease-ms", leader_lease_ms, -1, 100, 3600000),
    CF_INT_ROW(C, "leader-renew-ms", leader_renew_ms, -1, 10, 3600000),
    CF_INT_ROW(C, "leader-ask-ms", leader_ask_ms, -1, 10, 3600000),
    CF_INT_ROW(C, "token-ttl", token_ttl_s, 3600, 1, 86400),
    CF_INT_ROW(C, "token-leeway", token_leeway_s, 30, 0, 300),
    CF_PARSE_ROW("rendezvous-ports", set_rendezvous_ports),
    CF_PARSE_ROW("simulate-nodes", set_simulate_nodes),
};
#undef C

/* Applies one option; key without dashes. */
static int apply(void *cfg, const char *key, const char *v)
{
    return cf_apply(options, sizeof(options) / sizeof(options[0]), cfg, key, v);
}

static void defaults(struct api_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cf_defaults(options, sizeof(options) / sizeof(options[0]), cfg);
    snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:8080");
    snprintf(cfg->trust.header, sizeof(cfg->trust.header), "X-Forwarded-For");
    cfg->rendezvous_first = DB_RENDEZVOUS_FIRST;
    cfg->rendezvous_last = DB_RENDEZVOUS_LAST;
}

static void finish(struct api_config *cfg)
{
    if (!cfg->db_path[0])
        snprintf(cfg->db_path, sizeof(cfg->db_path), "%s", cfg->demo ? "allot-demo.db" : "allot.db");
    snprintf(cfg->files_stem, sizeof(cfg->files_stem), "%s",
             db_is_server(cfg->db_path) ? "allot" : cfg->db_path);
    if (!cfg->key_file[0])
        snprintf(cfg->key_file, sizeof(cfg->key_file), "%.500s.key", cfg->files_stem);
    if (!cfg->secrets_key_file[0])
        snprintf(cfg->secrets_key_file, sizeof(cfg->secrets_key_file), "%.490s.secrets.key",
                 cfg->files_stem);
    if (cfg->user_rate_limit < 0)
        cfg->user_rate_limit = cfg->rate_limit;
    cfg->trust.forwarded = strcasecmp(cfg->trust.header, "Forwarded") == 0;
    if (cfg->demo && !cfg->sims_given) {
        api_sim_parse("2x2", &cfg->sims[0]);
        cfg->n_sims = 1;
    }
}

/* Options of a PostgreSQL --db only (-1 until given): refused with a
 * SQLite one, saying why; one not given becomes its value for the kind of
 * database (-1 kept: main.c leaves the setting alone). */
#define LEADS_ALWAYS "a SQLite database serves one allotd, which leads for as long as it runs;" \
                     " docs/ha.md"
static const struct {
    const char *flag;
    size_t offset;
    int if_postgres, if_sqlite;
    const char *why;
} pg_only[] = {
    {"db-statement-timeout-ms", offsetof(struct api_config, db_statement_ms), -1, -1,
     "SQLite runs inside allotd"},
    {"leader-lease-ms", offsetof(struct api_config, leader_lease_ms), CTL_LEADER_TTL_MS,
     CTL_LEADER_TTL_MS, LEADS_ALWAYS},
    {"leader-renew-ms", offsetof(struct api_config, leader_renew_ms), CTL_LEADER_RENEW_MS,
     CTL_LEADER_RENEW_MS, LEADS_ALWAYS},
    {"leader-ask-ms", offsetof(struct api_config, leader_ask_ms), CTL_LEADER_ASK_MS,
     CTL_LEADER_ASK_MS, LEADS_ALWAYS},
};

static int pg_only_options(struct api_config *cfg)
{
    int server = db_is_server(cfg->db_path);
    size_t i;

    for (i = 0; i < sizeof(pg_only) / sizeof(pg_only[0]); i++) {
        int *v = (int *)((char *)cfg + pg_only[i].offset);
        if (*v >= 0 && !server) {
            fprintf(stderr, "allotd: --%s applies to a PostgreSQL --db only (%s)\n",
                    pg_only[i].flag, pg_only[i].why);
            return -1;
        }
        if (*v < 0)
            *v = server ? pg_only[i].if_postgres : pg_only[i].if_sqlite;
    }
    return 0;
}

int api_config_parse(struct api_config *cfg, int argc, char **argv)
{
    int i;

    defaults(cfg);
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--config") == 0) {
            if (cf_set_str(argv[i + 1], cfg->config_file, sizeof(cfg->config_file)) != 0 ||
                cf_read_file("allotd", cfg->config_file, apply, cfg) != 0)
                return -1;
        }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            printf("allotd %s\n", ALLOT_VERSION_STRING);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0)
            goto bad;
        if (strcmp(a, "--demo") == 0) {
            cfg->demo = 1;
            continue;
        }
        if (strcmp(a, "--init") == 0) { /* command line only: never from a config file */
            cfg->init = 1;
            continue;
        }
        if (i + 1 >= argc)
            goto bad;
        if (strcmp(a, "--config") == 0) {
            i++;
            continue;
        }
        if (apply(cfg, a + 2, argv[i + 1]) != 0)
            goto bad;
        i++;
    }
    if (cfg->demo && cfg->init) {
        fprintf(stderr, "allotd: --init and --demo do not go together (--demo makes a fresh"
                " database of its own)\n");
        return -1;
    }
    finish(cfg);
    if (pg_only_options(cfg) != 0)
        return -1;
    if (cfg->leader_renew_ms >= CTL_LEADER_LOCAL(cfg->leader_lease_ms)) {
        fprintf(stderr, "allotd: --leader-renew-ms %d must be less than 9/10 of"
                " --leader-lease-ms %d (%d): the leader's own deadline would pass between"
                " renewals (docs/ha.md)\n", cfg->leader_renew_ms, cfg->leader_lease_ms,
                CTL_LEADER_LOCAL(cfg->leader_lease_ms));
        return -1;
    }
    return 0;
bad:
    fprintf(stderr, "allotd: bad option %s (see --help)\n", argv[i]);
    return -1;
}
