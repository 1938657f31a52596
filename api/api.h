/*
 * api.h: what the files of allotd share: the server context, the request
 * as handlers see it, the route table, replies, authentication and
 * authorization. The control loop (the scheduler thread, leadership, the
 * change feed) is reached through control.h.
 *
 * Invariants:
 *   1. Every route is in api_routes[] with its method, pattern and the
 *      least permission it needs; the dispatcher authenticates before any
 *      handler that is not API_PUBLIC runs (default deny).
 *   2. Handlers check the caller's right on the object they touch
 *      (api_can()), not only the route's permission; objects in projects
 *      the caller cannot read answer 404, not 403.
 *   3. Every reply is JSON with a Content-Length (keep-alive safe), except
 *      /metrics (text) and the dashboard's files (static.c); errors are
 *      {code, message, details} outside the token endpoints.
 *   4. Secrets (passwords, client secrets, tokens, the key) are never
 *      logged or echoed.
 */
#ifndef ALLOT_API_H
#define ALLOT_API_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "control.h"

#define API_BODY_MAX (1024 * 1024)
#define API_PUBLIC_BODY_MAX (16 * 1024)   /* bodies of routes that need no token */
#define API_TOKEN_MAX 4096
#define API_QUERY_VALUE_MAX 1023   /* a query parameter's decoded value, in bytes */
#define API_JSON_DEPTH_MAX 32   /* arrays and objects inside each other (json_in.c) */
#define API_PAGE_MAX 500
#define API_PAGE_DEFAULT 50
#define API_CLUSTER_ID CTL_CLUSTER_ID
#define API_CLUSTER_NAME "allot"
#define API_ISSUER "allotd"
#define API_MAX_SIM 16

/* ---- configuration (config.c) ---- */
#define API_SIM_GPU_MEMORY_MIB 81920  /* a simulated device: 80 GiB unless told */

struct api_sim_spec {
    int machines, gpus;
    char pool[DB_NAME_LEN];
    char node_type[64];       /* the machines' node-type label; "" none */
    int64_t gpu_memory_mib;   /* memory of each device */
};

/* ---- the client's address behind trusted proxies (clientaddr.c) ---- */
#define API_MAX_TRUSTED 32
struct api_cidr {
    int family;               /* AF_INET or AF_INET6 */
    unsigned char addr[16];
    int bits;
};
struct api_client_trust {
    struct api_cidr trusted[API_MAX_TRUSTED]; /* --trusted-proxy */
    int n_trusted;                            /* 0: no proxy is trusted */
    char header[64];          /* --client-address-header */
    int forwarded;            /* header is Forwarded (RFC 7239), not a plain list */
};
/* "CIDR[,CIDR...]" (an address alone is its /32 or /128) into out: 0, or
 * -1 for a bad range, none, or more than max. */
int api_cidrs_parse(const char *list, struct api_cidr *out, int max, int *n);
/* Is addr (IPv4, IPv6, or IPv4-mapped IPv6) in one of the ranges? */
int api_cidrs_match(const struct api_cidr *c, int n, const char *addr);
/* The request's client address into out: peer, unless peer is trusted;
 * then the right-most untrusted hop of the header's lines (in order). */
void api_client_address(const struct api_client_trust *t, const char *peer,
                        const char *const *lines, int n_lines, char *out, size_t len);

struct api_config {
    char db_path[512];
    char listen[128];
    char key_file[512];
    char secrets_key_file[512]; /* the key sealing stored secrets (secretbox.c) */
    /* Where allotd keeps its own files (the key, workloads' logs) by
     * default: the database file's path, or "allot" in the working folder
     * when --db names a database server. */
    char files_stem[512];
    char config_file[512];
    int demo;
    int init;                /* --init: create the database, then exit */
    int threads;
    int request_timeout_ms;  /* a request head must arrive within it; a body within 5x */
    int schedule_period_ms;
    int sample_period_ms;
    int retention_days;      /* deleted workloads are purged after; 0: kept */
    int rate_limit;          /* requests per second per client address; 0: off */
    int user_rate_limit;     /* the same per signed-in principal; -1 (unset): rate_limit */
    struct api_client_trust trust; /* proxies whose client-address header counts */
    int secret_checks;       /* password and secret checks (yescrypt) at once */
    int secret_hash_cost;    /* yescrypt cost of the secrets hashed from now on, 1..11 */
    int agent_lease_ms;      /* an agent that has no answer this long stops its pods */
    int agent_margin_ms;     /* a silent node is lost after the lease and this */
    int token_ttl_s;
    int token_leeway_s;      /* clock difference allowed on a token's exp and nbf */
    int max_pending_project; /* Pending workloads a project may have; 0: no cap */
    int max_pending_user;    /* Pending workloads a user may have submitted; 0: no cap */
    int db_statement_ms;     /* PostgreSQL's statement_timeout (ms, 0 none); -1: not given */
    int read_max_age_ms;     /* the read cache's bound (ms; 0: no cache) */
    int leader_lease_ms;     /* the leader lease; renewed every leader_renew_ms by the */
    int leader_renew_ms;     /* leader, asked for every leader_ask_ms by the others */
    int leader_ask_ms;
    int rendezvous_first;    /* the node ports distributed workloads' pods meet on */
    int rendezvous_last;     /* (db/rendezvous.c), first to last */
    int n_sims;
    int sims_given;          /* --simulate-nodes seen (0x0 included) */
    struct api_sim_spec sims[API_MAX_SIM];
    char port_file[512];     /* if set, the bound port is written there */
    char metrics_listen[128]; /* --metrics-listen: /metrics without a token there; "" none */
    char web_root[512];      /* --web-root; "" to look in the default places */
    int audit_retention_days; /* audit log rows are deleted after; 0: kept */
};

/* Parses argv (and the config file it names); 0 ok, 1 printed help, -1 error. */
int api_config_parse(struct api_config *cfg, int argc, char **argv);
int api_sim_parse(const char *s, struct api_sim_spec *out);

/* ---- principals and rights (auth.c, authz.c) ---- */
enum api_perm {
    API_PUBLIC = 0,
    API_AUTH = 1 << 0,        /* any authenticated principal */
    API_ORG_READ = 1 << 1,
    API_ORG_WRITE = 1 << 2,
    API_WL_READ = 1 << 3,
    API_WL_WRITE = 1 << 4,
    API_IAM = 1 << 5,
    API_NODE_WRITE = 1 << 6,
    API_AGENT = 1 << 7        /* an allot-agent's node token, not a user's JWT */
};

struct api_principal {
    struct db_user user;
    struct db_rule *rules;   /* malloc'd */
    int n_rules;
};

#define API_ROLE_SYSTEM_ADMIN 1
struct api_role {
    int id;
    const char *name;
    const char *description;
    unsigned perms;
};
extern const struct api_role api_roles[];
extern const int api_n_roles;
const struct api_role *api_role_find(int id);

/* What a right means in Run:ai's terms: a resource type of its Permission
 * schema, and the rights that grant reading it and changing it (create,
 * update, delete). API_AUTH: every authenticated principal; 0: nobody. */
struct api_permission {
    const char *resource_type, *display_name, *group_id;
    unsigned read, write;
};
extern const struct api_permission api_permissions[];
extern const int api_n_permissions;

/* Does p hold perm on the project (project_id, department_id)? Either id
 * may be "" (system objects need a system-scope rule). */
int api_can(const struct api_principal *p, unsigned perm, const char *project_id,
            const char *department_id);
/* Does p hold perm on anything (used for the route-level check)? */
int api_can_any(const struct api_principal *p, unsigned perm);
void api_principal_clear(struct api_principal *p);

struct api_keyring {
    unsigned char key[64];
    int len;
    int leeway_s; /* a token is good this long past its exp and before its nbf */
};
/* Loads the key file, creating it with 32 random bytes (mode 0600) if
 * missing; refuses a short or group/world-readable key. */
int api_key_load(const char *path, struct api_keyring *out);
/* crypt(3) yescrypt hash of a secret at cost (1..11: each step doubles the
 * time and memory; 5 is libxcrypt's default); 0 on success. */
int api_secret_hash(const char *secret, int cost, char *out, size_t len);
int api_secret_check(const char *secret, const char *hash);
/* As long as a check of a hash made at cost takes, and matches nothing:
 * what a sign-in with an unknown name costs. 0 when the check ran, -1 when
 * no setting could be made for cost. */
int api_secret_check_none(const char *secret, int cost);
/* Random URL-safe string of n characters (n < len). */
int api_random_text(char *out, size_t len, int n);

enum api_token_type { API_TOKEN_ACCESS = 0, API_TOKEN_REFRESH = 1, API_TOKEN_ID = 2 };
#define API_ID_AUDIENCE "allot-id" /* an ID token's aud: it says who signed in, never a bearer */
/* Issues a signed HS256 access or ID token (typ "id", aud API_ID_AUDIENCE:
 * what the token grants answer as idToken, refused as a bearer); *out is
 * malloc'd (free()). A refresh token comes from api_token_issue_refresh(). */
int api_token_issue(const struct api_keyring *k, const struct db_user *u, int type,
                    int ttl_s, int64_t now_s, char **out);
/* An access token of a sign-in's family (claim fam; NULL: none): good
 * only while the family lives (db_refresh_live). */
int api_token_issue_access(const struct api_keyring *k, const struct db_user *u, int ttl_s,
                           int64_t now_s, const char *family, char **out);
/* A refresh token of a sign-in's family (claim fam) at generation gen:
 * each refresh rotates it to gen + 1 (db_refresh_rotate). */
int api_token_issue_refresh(const struct api_keyring *k, const struct db_user *u, int ttl_s,
                            int64_t now_s, const char *family, int64_t gen, char **out);
/* Verifies signature (HS256 only), exp, nbf, iss and type; gives the
 * subject id and token version. 0 ok, -1 invalid. */
int api_token_verify(const struct api_keyring *k, const char *token, int type, int64_t now_s,
                     int64_t *user_id, int64_t *token_version);
struct api_token_info {
    int64_t user_id, token_version, exp_s, nbf_s;
    char family[DB_ID_LEN];       /* its sign-in's ("" an access token names none) */
    int64_t gen;                  /* a refresh token's: its place in the family */
};
/* The same check, giving every claim the caller may keep. */
int api_token_check(const struct api_keyring *k, const char *token, int type, int64_t now_s,
                    struct api_token_info *info);

/* ---- the projects submissions name (projcache.c) ---- */
struct api_project {
    int64_t seq;
    char id[DB_ID_LEN], name[DB_NAME_LEN];
    char parent_id[DB_ID_LEN], parent_name[DB_NAME_LEN];
    char node_types[1024];    /* its own, else its department's */
    char rules[1024];         /* effective schedulingRules: per rule, the stricter of its
                                 own and its department's */
};
struct api_app;
struct api_projcache;
struct api_projcache *api_projcache_new(void);
void api_projcache_free(struct api_projcache *pc);   /* NULL is a no-op */
/* The project of that id; DB_ENOTFOUND if none (or not a project). */
int api_project_lookup(struct api_app *app, const char *id, struct api_project *out);
/* Every project's seq, id and department, malloc'd (*n of them); where
 * workloads are read from memory (PostgreSQL), read from the database only
 * when the organization changed since or --read-max-age-ms passed. */
struct api_project_ref {
    int64_t seq;
    char id[DB_ID_LEN], parent_id[DB_ID_LEN];
};
int api_project_refs(struct api_app *app, struct api_project_ref **out, int *n);

/* ---- the policy chains submissions read (polcache.c) ----
 * Whoever writes a policy calls api_polcache_invalidate() once the write
 * has committed; organization changes advance the scheduler's generation,
 * which the cache checks too. */
struct api_polcache;
struct db_policy;
struct api_polcache *api_polcache_new(void);
void api_polcache_free(struct api_polcache *pc); /* NULL is a no-op */
void api_polcache_invalidate(struct api_polcache *pc); /* NULL is a no-op */
/* db_policy_chain() through app's cache (none: straight to the database). */
int api_policy_chain(struct api_app *app, const char *type, const char *dept,
                     const char *project, struct db_policy **out, int *n);

/* ---- the principal cache (pcache.c) ----
 * Verified tokens' principals, so authenticated requests skip libjwt and
 * the database. Whoever changes principals, token versions or access
 * rules calls api_pcache_invalidate() once the change has committed. */
struct api_pcache;
struct api_pcache *api_pcache_new(void);
void api_pcache_free(struct api_pcache *pc);     /* NULL is a no-op */
void api_pcache_invalidate(struct api_pcache *pc);
uint64_t api_pcache_generation(struct api_pcache *pc);
/* 0 and a copy of the principal (rules malloc'd) if the token is cached
 * and still valid at now_s; -1 otherwise. */
int api_pcache_get(struct api_pcache *pc, const char *token, int64_t now_s,
                   struct api_principal *out);
/* Caches p for the token, good from nbf_s to exp_s (its claims widened
 * by the keyring's leeway); generation is api_pcache_generation() read
 * before p was loaded. */
void api_pcache_put(struct api_pcache *pc, const char *token, int64_t exp_s, int64_t nbf_s,
                    uint64_t generation, const struct api_principal *p);

/* ---- the server (http.c) ---- */
struct api_app {
    struct api_config cfg;
    struct db *db;
    struct api_keyring key;
    struct ctl_sched *sched;
    struct ctl_leader *leader;
    struct ctl_watch *watch;    /* heartbeats that wait for their node's pods; may be NULL */
    struct api_ratelimit *rl;   /* per client address */
    struct api_ratelimit *url;  /* per signed-in principal */
    struct api_loginguard *lg;  /* may be NULL: no limits on guessing */
    struct api_pcache *pc;    /* may be NULL: no cache */
    struct api_projcache *projc; /* may be NULL: no cache */
    struct api_polcache *polc; /* may be NULL: no cache */
    struct api_viewcache *vc; /* may be NULL: no cache */
    struct api_readcache *rcache; /* PostgreSQL only; NULL: no cache */
    struct api_audit *audit;  /* may be NULL: nothing audited */
    struct mg_context *mg;
    int port;
    int metrics_port;         /* the --metrics-listen port, 0 if none */
    char web_root[4096];      /* realpath of the dashboard's files; "" if none */
};

struct api_req {
    struct mg_connection *conn;
    struct api_app *app;
    const char *method;
    const char *path;
    const char *query;        /* may be NULL */
    const char *remote;       /* the client's address (clientaddr.c) */
    char remote_buf[64];
    const char *content_type; /* may be NULL */
    char params[2][DB_NAME_LEN];
    char *body;               /* NUL-terminated; malloc'd by the dispatcher */
    size_t body_len;
    struct api_principal who; /* filled for user routes */
    int64_t agent_token;      /* API_AGENT routes: the agent token's seq */
    char agent_node[DB_NAME_LEN]; /* API_AGENT routes: the node it is bound to, or "" */
    unsigned arg;             /* the route's arg (enum api_route_arg) */
    int status;               /* what was sent */
    struct api_idem *idem;    /* an Idempotency-Key whose answer is kept (idempotency.c) */
    char subject[DB_NAME_LEN]; /* a token grant's login, for the audit log */
};

typedef void (*api_handler)(struct api_req *r);
/* A handler's function type, to declare a family's routes together:
 * api_handler_fn api_h_x_list, api_h_x_get; */
typedef void api_handler_fn(struct api_req *r);

/* ---- Idempotency-Key (idempotency.c) ---- */
struct api_idem;
/* Before handler h: 1 if the request was answered here (a kept answer
 * replayed, a key used with another request, a bad key), else 0 (r->idem
 * set when the answer is to be kept under the request's key). */
int api_idem_begin(struct api_req *r, api_handler h);
/* What a reply sends, kept while r->idem is set (http.c's senders). */
void api_idem_capture(struct api_req *r, int status, const char *body, size_t len);
/* After the handler: keeps a 2xx answer under the key, else frees it. */
void api_idem_end(struct api_req *r);
/* Whether this request retries one whose key was reserved and never
 * answered (its server died after committing, or it is still running);
 * since_ms: when. A handler that meets its names taken since then by the
 * same principal answers those workloads as the first answer would have. */
int api_idem_retry(const struct api_req *r, int64_t *since_ms);

/* What one handler serving several routes does on this one: the route
 * table says, the dispatcher copies it to api_req.arg. */
enum api_route_arg {
    API_ARG_PROJECT = 1,      /* org-unit routes: projects, not departments */
    API_ARG_COUNT = 2,        /* list routes: the count, not the rows */
    API_ARG_PATCH = 4,        /* PUT/PATCH routes: merge the fields present */
    API_ARG_USER_APP = 8,     /* access-key routes: Run:ai's user-application shapes */
    API_ARG_ADMIN = 16,       /* access-key routes: everyone's (the administration routes) */
};
struct api_route {
    const char *method;
    const char *pattern;      /* segments; "{x}" captures one */
    api_handler handler;
    unsigned perm;            /* enum api_perm: API_PUBLIC, API_AUTH or a right */
    unsigned arg;             /* enum api_route_arg; 0 if none */
};
extern const struct api_route api_routes[];
extern const int api_n_routes;

/* Every operation of Run:ai's OpenAPI document (runai_ops.c, written by
 * scripts/openapi-sync.py): a request for one allotd does not serve is
 * answered 501 naming it. */
struct api_runai_op {
    const char *method;
    const char *pattern;
    const char *operation_id;
    int served;               /* 1: api_routes[] has it */
};
extern const struct api_runai_op api_runai_ops[];
extern const int api_n_runai_ops;

int api_http_start(struct api_app *app);

/* ---- the audit log (audit.c; read by h_audit.c) ---- */
struct api_audit;
/* Starts allot-audit, which writes the notes in batches and deletes rows
 * older than retention_days (0: none); NULL on failure. */
struct api_audit *api_audit_start(struct db *db, int retention_days);
/* Rows older than days (0: none) are deleted from the next batch on. */
void api_audit_set_retention(struct api_audit *a, int days);
/* Writes what is queued and stops the thread (NULL is a no-op). */
void api_audit_stop(struct api_audit *a);
/* Is the method one the audit log records (POST, PUT, PATCH, DELETE)? */
int api_audit_mutating(const char *method);
/* Notes request r, answered by route rt's handler (a mutating method, not
 * an agent's route): queued, written by allot-audit. */
struct api_route;
void api_audit_note(struct api_req *r, const struct api_route *rt);
void api_h_audit_log(struct api_req *r);
void api_h_audit_file(struct api_req *r);

/* ---- the tenant's settings (h_settings.c) ---- */
/* How long a sign-in lives past its last use (browserSessionTimeout's
 * idleTimeout), in seconds. */
int api_session_idle_s(struct api_app *app);
/* Applies the stored tenant settings over the flags' values (at start). */
int api_tenant_settings_load(struct api_app *app);
void api_h_security_settings(struct api_req *r);
void api_h_security_setting_get(struct api_req *r);
void api_h_security_setting_put(struct api_req *r);
void api_h_tenant_settings(struct api_req *r);
void api_h_tenant_setting_get(struct api_req *r);
void api_h_tenant_setting_put(struct api_req *r);
void api_h_logo_get(struct api_req *r);
void api_h_logo_post(struct api_req *r);

/* ---- client connections (conns.c) ----
 * allotd's accept() records every connection civetweb accepts; once more
 * are open than the workers less a reserve, the one that has waited the
 * longest without a request being answered is shut down. */
struct mg_connection;
/* workers: civetweb's threads; a body still arriving after body_timeout_ms
 * has the read side of its socket shut down. */
int api_conns_start(int workers, int body_timeout_ms);
void api_conns_stop(void);
/* Shuts the listening sockets down, so that mg_stop() need not wait for
 * civetweb's listener to wake from its poll (up to 2 s). */
void api_conns_unlisten(void);
/* The dispatcher's reports: a request head arrived (its body is next),
 * its handler runs, its reply is sent. */
void api_conns_begin(struct mg_connection *conn);
void api_conns_busy(struct mg_connection *conn);
void api_conns_end(struct mg_connection *conn);
/* civetweb's init_connection and connection_close callbacks. */
int api_conns_init_connection(const struct mg_connection *conn, void **data);
void api_conns_closed(const struct mg_connection *conn);
struct api_conns_stats {
    long long accepted, evicted;
    int open;
    int hooked;               /* civetweb's accept() is allotd's */
};
void api_conns_stats(struct api_conns_stats *out);
void api_http_stop(struct api_app *app);

/* Replies; each takes ownership of `body` and sends a Content-Length. */
void api_reply(struct api_req *r, int status, json_t *body);
void api_reply_text(struct api_req *r, int status, const char *type, const char *text,
                    size_t len);
/* The most a reply's status line and headers take. */
#define API_REPLY_HEAD 512
/* api_reply_text of the len bytes at buf + room, the header written into
 * the room before them (API_REPLY_HEAD bytes are enough): one write and
 * no copy of the body (the JSON writer keeps that room, jw.c). */
void api_reply_room(struct api_req *r, int status, const char *type, char *buf, size_t room,
                    size_t len);
void api_error(struct api_req *r, int status, const char *message, const char *details);
/* api_error with a Retry-After header of retry_s seconds (429, 503). */
void api_error_retry(struct api_req *r, int status, const char *message, const char *details,
                     int retry_s);

/* ---- quotas as a change would set them (h_org.c) ----
 * The queue of that id and kind (DB_PROJECT, DB_DEPARTMENT) with
 * `resources` (a resources[] array as PUT / PATCH .../resources take it)
 * replacing or merged into its quotas, checked as those routes check it
 * (404 unreadable, 403 no org-write right, 400 bad entries, a limit below
 * its quota, a project's quota above its department's); nothing is
 * stored. malloc'd (free()); NULL when it replied. */
struct db_queue *api_queue_resources_in(struct api_req *r, int kind, const char *id,
                                        json_t *resources, int replace);

/* ---- a workload submission's spec (wl_spec.c) ----
 * Reads top.spec (and masterSpec) into w for the project:
 * compute, pools, node types, affinity, priority, pods, ports, rules; a
 * field allot does not act on is a 400 (answered on r). 0 ok, -1 answered. */
int api_wl_spec_in(struct api_req *r, json_t *top, const struct api_project *project,
                   struct db_workload *w);
/* The checks of api_wl_spec_in() that need no project, on a part of a
 * spec of a workload of that type (what an asset or a template gives):
 * 0, or -1 answered 400. */
int api_wl_spec_part_check(struct api_req *r, json_t *spec, int type);
/* The ports a workload's pods listen on at their node, from its stored
 * spec: a new array of {container, host, name}. */
json_t *api_wl_ports(const char *spec_text);
/* Like api_reply_text, with extra header lines ("Name: value\r\n" each). */
void api_reply_with(struct api_req *r, int status, const char *type, const char *body,
                    size_t len, const char *extra);
/* The HTTP status of a DB_E* code: 404, 409, 400; 507 for a full disk,
 * 503 while the store cannot take writes (locked, read-only, file
 * removed) or is closing; 500 otherwise. */
int api_db_status(int rc);
/* Replies with api_db_status(rc) and an error body: `what` for the codes
 * about the request, the store's own account (db_health) for the others. */
void api_db_error(struct api_req *r, int rc, const char *what);
/* A delete's answer: 204 with no body when rc is DB_OK, else api_db_error(). */
void api_reply_deleted(struct api_req *r, int rc, const char *what);
/* The request body as a JSON object (strict: no duplicate keys); replies
 * 400 itself and returns NULL when it is not one. */
json_t *api_body_object(struct api_req *r);
/* Finds name=value in an &-separated string (a query or a form body) and
 * URL-decodes the value into out: 0 found, 1 absent, -1 present but not
 * decodable into out (too long, a malformed escape, a control character). */
int api_form_get(const char *s, const char *name, char *out, size_t len);
int api_query(const struct api_req *r, const char *name, char *out, size_t len);
/* 1 if every parameter of r->query decodes (no malformed escape, NUL or
 * control character) to at most API_QUERY_VALUE_MAX bytes; else 0 after
 * replying 400 naming the first that does not. The dispatcher checks it
 * before any handler runs. */
int api_query_valid(struct api_req *r);
/* An integer query parameter in [min, max]: 0 (out set, or untouched when
 * absent), or -1 after replying 400. */
int api_query_int(struct api_req *r, const char *name, int64_t min, int64_t max, int64_t *out);
/* A boolean query parameter (true or false): 0 (out set, or untouched
 * when absent), or -1 after replying 400. */
int api_query_bool(struct api_req *r, const char *name, int *out);
int64_t api_now_ms(void);
/* A name usable as a namespace: lowercase letters, digits and '-', <= 63. */
int api_valid_name(const char *s);
/* Formats ms since the epoch as ISO-8601 UTC ("...Z"); a json null for 0. */
json_t *api_time(int64_t ms);
/* A stable UUID (RFC 9562 version 8) for the n-th thing of a kind inside
 * the object with UUID `base` (a workload's events and pods): the same
 * arguments always give the same id, different ones practically never. */
enum api_uuid_kind { API_UUID_EVENT = 1, API_UUID_POD = 2 };
/* Is s a UUID in its text form (8-4-4-4-12 hex digits)? */
int api_is_uuid(const char *s);
void api_uuid_derived(const char *base, int kind, int64_t n, char out[DB_ID_LEN]);

/* ---- a JSON writer for hot replies (jw.c) ----
 * Values take a key inside objects and NULL inside arrays. */
struct jw {
    char *buf;                    /* API_REPLY_HEAD bytes of room, then the text */
    size_t n, cap;                /* n counts the room */
    int need_comma, failed;
};
void jw_open(struct jw *w, char c);                /* '{' or '[' (after jw_key in objects) */
void jw_close(struct jw *w, char c);
void jw_key(struct jw *w, const char *key);       /* a name written in the code, never input */
void jw_str(struct jw *w, const char *key, const char *s);
void jw_int(struct jw *w, const char *key, int64_t v);
void jw_milli(struct jw *w, const char *key, int64_t milli);   /* 1500 -> 1.5 */
void jw_mib(struct jw *w, const char *key, int64_t mib);       /* 512 -> "512Mi" */
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
void jw_time(struct jw *w, const char *key, int64_t ms);       /* ISO-8601, null for 0 */
/* A JSON text copied as it is (dflt when text is NULL or empty). */
void jw_json(struct jw *w, const char *key, const char *text, const char *dflt);
void jw_raw(struct jw *w, const char *s, size_t n);
/* One CSV field, after `sep` (0: none; ',' between fields): quoted, with
 * its quotes doubled, when JW_CSV_QUOTE is set or it holds a comma, a
 * quote or a line break; with JW_CSV_TEXT, a text that opens with = + - @
 * (a formula to a spreadsheet) is written behind a ' and quoted. */
#define JW_CSV_QUOTE 1
#define JW_CSV_TEXT 2
void jw_csv(struct jw *w, char sep, const char *s, int flags);
/* Room for `more` bytes beyond what is written, allocated now (a reply
 * whose size is known roughly grows once instead of doubling). */
void jw_reserve(struct jw *w, size_t more);
/* The text (malloc'd; NULL after a failure); the writer is reset. */
char *jw_take(struct jw *w, size_t *len);
/* Replies with the text, or 500 after a failure; the writer is reset. */
void jw_reply(struct api_req *r, int status, struct jw *w);
void api_time_text(int64_t ms, char *buf, size_t len);

/* ---- the rendered views of workloads, kept by row (viewcache.c) ---- */
struct api_viewcache;
struct api_viewcache *api_viewcache_new(void);
void api_viewcache_free(struct api_viewcache *vc);   /* NULL is a no-op */
/* If the view of row w is kept (rendered from a row equal to w in every
 * byte, spec included): writes it to j, the kept text before and after
 * the field that moves with the clock and that field (fresh_key,
 * fresh_value) between them, with j's commas as the writer would place
 * them; 1. Otherwise 0, nothing written. */
int api_viewcache_get(struct api_viewcache *vc, const struct db_workload *w, struct jw *j,
                      const char *fresh_key, int64_t fresh_value);
/* Keeps the view of row w: the text before the clock's field (from its
 * opening brace) and after it (up to, not including, its closing brace). */
void api_viewcache_put(struct api_viewcache *vc, const struct db_workload *w, const char *before,
                       size_t before_len, const char *after, size_t after_len);

/* ---- workloads read from memory on PostgreSQL (readcache.c) ---- */
struct api_readcache;
#define API_READ_MAX_AGE_MS 1000   /* --read-max-age-ms's default */
/* A cache whose entries answer for at most max_age_ms after their read
 * began (0 or less: no cache, NULL). */
struct api_readcache *api_readcache_new(struct db *db, int max_age_ms);
void api_readcache_free(struct api_readcache *rc);   /* NULL is a no-op */
/* db_workload_get_pods() (pods NULL: db_workload_get()), answered from
 * the cache while its entry is current (readcache.c, invariant 1). */
int api_readcache_workload(struct api_readcache *rc, struct db *db, const char *id,
                           struct db_workload *out, struct db_pod **pods, int *n);
/* A page of rows, lent by the cache or owned: read w[0..n), then
 * api_rows_release(). */
struct api_rc_entry;
struct api_rows {
    const struct db_workload *w;
    int n;
    struct api_readcache *cache;
    struct api_rc_entry *held;          /* lent by the cache; NULL: own */
    struct db_workload *own;
};
/* db_workload_list() answered from the cache while its entry is current. */
int api_readcache_list(struct api_readcache *rc, struct db *db, const struct db_wl_query *q,
                       struct api_rows *out);
void api_rows_release(struct api_rows *r);
/* Reads answered from entries, and reads that went to the database. */
void api_readcache_stats(struct api_readcache *rc, int64_t *hits, int64_t *misses);

/* ---- strict JSON input (json_in.c) ---- */
/* The deepest nesting of arrays and objects in text, counted without
 * recursion; counting stops once it passes max. */
int api_json_depth(const char *text, size_t len, int max);
/* Parses text (no duplicate keys, at most API_JSON_DEPTH_MAX levels);
 * replies 400 itself and returns NULL when it is not JSON. */
json_t *api_json_parse(struct api_req *r, const char *text, size_t len);
/* Rejects keys of obj not in the NULL-terminated allow-list: replies 400
 * naming the field and returns -1. */
int api_json_allow(struct api_req *r, json_t *obj, const char *const *allowed, const char *where);
/* Typed field getters: 0 ok or absent (out untouched), -1 replied 400. */
int api_json_str(struct api_req *r, json_t *obj, const char *key, char *out, size_t len,
                 int required);
int api_json_int(struct api_req *r, json_t *obj, const char *key, int64_t min, int64_t max,
                 int64_t *out);
/* Kinds of text: a login or identifier (printable ASCII, no space), a
 * label (printable ASCII), free text (anything but control and invisible
 * characters: no two names that look alike, nothing that reorders what
 * is shown). */
enum api_text { API_TEXT_LOGIN = 0, API_TEXT_LABEL, API_TEXT_FREE };
int api_valid_text(const char *s, int kind);
/* api_json_str, then api_valid_text: a 400 naming the field otherwise. */
int api_json_text(struct api_req *r, json_t *obj, const char *key, char *out, size_t len,
                  int required, int kind);
int api_json_num(struct api_req *r, json_t *obj, const char *key, double min, double max,
                 double *out);
int api_json_bool(struct api_req *r, json_t *obj, const char *key, int *out);
/* A request body's fields as a table, walked by api_fields_in(): each
 * row names a JSON key, the kind of value, its limits and where in the
 * target struct it goes (offsetof), so that a handler holds its table,
 * not a getter call per field. */
enum api_field_kind {
    API_F_STR,   /* char[size]: api_json_str */
    API_F_TEXT,  /* char[size] of api_text kind text: api_json_text */
    API_F_INT,   /* int from an integer lo..hi: api_json_int */
    API_F_I64,   /* int64_t from an integer lo..hi: api_json_int */
    API_F_NUM,   /* double from a number lo..hi: api_json_num */
    API_F_BOOL,  /* int from true or false: api_json_bool */
    API_F_OTHER, /* allowed; the handler reads it itself */
};
enum api_field_need {
    API_F_OPTIONAL = 0,
    API_F_REQUIRED,     /* always */
    API_F_ON_CREATE,    /* when api_fields_in's creating is set */
};
struct api_field {
    const char *key;
    enum api_field_kind kind;
    size_t offset;       /* offsetof the field in the target struct */
    size_t size;         /* API_F_STR, API_F_TEXT: the field's room */
    double lo, hi;       /* API_F_INT, API_F_I64, API_F_NUM */
    enum api_field_need need;
    int text;            /* API_F_TEXT: enum api_text */
};
#define API_FIELD_STR(T, key, f, need) \
    {key, API_F_STR, offsetof(T, f), sizeof(((T *)0)->f), 0, 0, need, 0}
#define API_FIELD_STRN(T, key, f, size, need) {key, API_F_STR, offsetof(T, f), size, 0, 0, need, 0}
#define API_FIELD_TEXT(T, key, f, size, need, text) \
    {key, API_F_TEXT, offsetof(T, f), size, 0, 0, need, text}
#define API_FIELD_INT(T, key, f, lo, hi) {key, API_F_INT, offsetof(T, f), 0, lo, hi, 0, 0}
#define API_FIELD_I64(T, key, f, lo, hi) {key, API_F_I64, offsetof(T, f), 0, lo, hi, 0, 0}
#define API_FIELD_NUM(T, key, f, lo, hi) {key, API_F_NUM, offsetof(T, f), 0, lo, hi, 0, 0}
#define API_FIELD_BOOL(T, key, f) {key, API_F_BOOL, offsetof(T, f), 0, 0, 0, 0, 0}
#define API_FIELD_OTHER(key) {key, API_F_OTHER, 0, 0, 0, 0, 0, 0}
#define API_FIELDS_N(table) (sizeof(table) / sizeof((table)[0]))
/* Refuses a key of obj that no row names (as api_json_allow, where the
 * prefix), then reads every row in order into target: 0, or -1 with the
 * first field's 400 replied. An absent field leaves its target as it
 * was. */
int api_fields_in(struct api_req *r, json_t *obj, const struct api_field *table, size_t n,
                  void *target, const char *where, int creating);
/* A Kubernetes memory quantity ("500M", "1Gi", "1024" bytes) in MiB,
 * rounded up; -1 if it is not one (common/quantity.c: no sign, nan, inf
 * or spaces; at most 1 EiB). */
int api_quantity_mib(const char *s, int64_t *out);

/* ---- list queries over rows in memory (listq.c) ---- */
enum api_lv_kind { API_LV_TEXT = 0, API_LV_NUMBER, API_LV_DATE };
struct api_lv {
    int kind;                 /* enum api_lv_kind */
    const char *s;            /* TEXT */
    double d;                 /* NUMBER; DATE in ms since the epoch */
};
/* A row's field value; -1 if the field is unknown. */
typedef int (*api_lq_get)(const void *row, const char *field, struct api_lv *out);
struct api_lq {
    int n_filters;
    struct db_filter filters[DB_MAX_FILTERS];
    char sort_by[32];
    int desc;
    int offset, limit;
    int limit_given;          /* 0: limit is the default */
};
struct api_lq_rows {
    const void *base;         /* rows[0..n) of `size` bytes each */
    int n;
    size_t size;
    api_lq_get get;
    json_t *(*to_json)(struct api_req *r, const void *row);
};
/* filterBy, sortBy, sortOrder, offset, limit; replies 400 itself. */
int api_lq_parse(struct api_req *r, struct api_lq *q);
/* search=TEXT: one more filter, `field` contains TEXT; -1 replied 400. */
int api_lq_search(struct api_req *r, struct api_lq *q, const char *field);
/* One filterBy term "<field><op><value>" of n bytes into f; -1 if malformed.
 * Operators: == != <= >= =@ (contains) !@ =^ (starts) =$ (ends). */
int api_lq_filter(const char *s, size_t n, struct db_filter *f);
/* 1 keep, 0 drop, -1 replied 400 (unknown field or bad value). */
int api_lq_keep(struct api_req *r, const struct api_lq *q, const void *row, api_lq_get get);
/* A stable order of rows by the sort field; *order malloc'd. */
int api_lq_order(struct api_req *r, const struct api_lq *q, const void *rows, int n,
                 size_t size, api_lq_get get, int **order);
/* Filters and sorts rows: *kept (malloc'd) holds the indexes of the rows
 * kept, in order; -1 replied 400 (or 500). */
int api_lq_select(struct api_req *r, const struct api_lq *q, const struct api_lq_rows *rows,
                  int **kept, int *n_kept);
/* Filters, sorts and pages rows: the page's array (and *n_kept, the rows
 * kept), or NULL where it replied itself ({count} when count_only, 400,
 * 500). */
json_t *api_lq_page(struct api_req *r, const struct api_lq *q, const struct api_lq_rows *rows,
                    int count_only, int *n_kept);
/* Filters, sorts and pages rows; replies {key: [...], next} or {count}. */
void api_lq_reply(struct api_req *r, const struct api_lq *q, const struct api_lq_rows *rows,
                  const char *key, int count_only);
/* ISO-8601 ("2021-01-01", "2021-01-01T00:00:00[.sss]" with "Z" or an
 * offset such as "+02:00") to ms; 0 ok (db_time_parse). */
int api_parse_time(const char *s, int64_t *ms);

/* ---- metrics time series (h_series.c) ---- */
/* start, end and the number of evenly spaced sample times between them. */
struct api_series_range {
    int64_t start, end;
    int n_samples;
};
/* metricType (repeated, or a comma list; required) against names[0..n-1]:
 * their indices into types (at most max); -1 with a 400 naming them. */
int api_series_types(struct api_req *r, const char *const *names, int n_names, int *types,
                     int max, int *n_types);
/* start and end (required ISO-8601, start <= end) and numberOfSamples
 * (default 20, 1 to 1000); -1 with a 400. */
int api_series_range_in(struct api_req *r, struct api_series_range *q);
/* The time of sample i of q. */
int64_t api_series_at(const struct api_series_range *q, int i);

/* ---- the series of the cluster, pools, nodes (h_infra_series.c) ----
 * and of what a workload holds and asks: GPU_ALLOCATION, RUNNING_POD_COUNT
 * (recorded, series_rec.c), POD_COUNT, CPU_REQUEST_CORES,
 * CPU_MEMORY_REQUEST_BYTES, GPU_MEMORY_REQUEST_BYTES (its requests, over
 * its life). Appends metric's measurement for w to a; -1 replied. */
int api_wl_series_add(struct api_req *r, const struct db_workload *w, const char *metric,
                      const struct api_series_range *q, json_t *a);
/* A project's or department's series of what agents measure on the
 * devices its pods hold (metric: GPU_MEMORY_UTILIZATION, GPU_UTILIZATION
 * or IDLE_ALLOCATED_GPUS), over every pool (pool_seq 0) or one; appends
 * its measurement, labelled with labels (borrowed; NULL: null), to a; -1
 * replied. */
int api_queue_series_add(struct api_req *r, const char *queue_id, int64_t pool_seq,
                         const char *metric, json_t *labels, const struct api_series_range *q,
                         json_t *a);
/* ---- telemetry: current figures grouped (h_telemetry.c) ---- */
#define API_TALLY_KEYS 3
#define API_TALLY_MAX 1024
struct api_tally_key {
    int order;                    /* sorts before value (pending-time buckets) */
    char value[DB_NAME_LEN];
    char name[DB_NAME_LEN];
};
struct api_tally {
    int n;
    struct api_tally_row {
        struct api_tally_key keys[API_TALLY_KEYS];
        double value;
        int unlimited;            /* a -1 was added: the row answers -1 */
    } rows[API_TALLY_MAX];
};
/* Adds v to the row of these keys (a new row when none has them); v < 0
 * (an unlimited quota) makes the row's value -1. */
void api_tally_add(struct api_tally *t, const struct api_tally_key *keys, int n_keys, double v);
/* Run:ai's TelemetryResponse of t, sorted; values printed as integers or
 * with three decimals. */
json_t *api_tally_json(struct api_tally *t, const char *type, const char *const *group_keys,
                       int n_keys, int integer);
/* groupBy (a comma list of names, at most max): indices into names; -1
 * with a 400. */
int api_group_by_in(struct api_req *r, const char *const *names, int n_names, int *groups,
                    int max, int *n_groups);
/* telemetryType (required): its index in names; -1 with a 400. */
int api_telemetry_type_in(struct api_req *r, const char *const *names, int n_names);

/* ---- GPU figures agents measure (gpu_usage.c) ---- */
struct db_pod_gpu_row;
/* A pod's gpuUsage from its devices' rows (any order, any pods): {utilization,
 * memoryUsedBytes, updatedAt, devices}, or null when none is pod idx's. */
json_t *api_pod_gpu_usage(const struct db_pod_gpu_row *rows, int n, int idx);
/* The utilisation (hundredths of a percent) and memory (bytes), each -1
 * when unknown, of the devices rows[0..n-1], by the rule of gpu_usage.c. */
void api_gpu_sum(const struct db_pod_gpu_row *rows, int n, int64_t *util_centi,
                 int64_t *mem_bytes);

/* ---- tables keyed by a string (keytable.c) ---- */
/* Every entry of an api_keytable starts with this head. */
struct api_kt_head {
    char key[DB_NAME_LEN];
    int64_t last_ms;          /* 0: free; the entry's owner may move it on */
};
struct api_keytable {
    unsigned char *slots;
    size_t n_slots, entry_size;
};
/* n_slots entries of entry_size bytes (a struct that starts with struct
 * api_kt_head); 0, or -1 out of memory. */
int api_keytable_init(struct api_keytable *t, size_t n_slots, size_t entry_size);
void api_keytable_fini(struct api_keytable *t);
/* The entry of key; a missing key takes the stalest entry of its probe,
 * zeroed but for its head (*fresh = 1). No locking: the owner's. */
void *api_keytable_find(struct api_keytable *t, const char *key, int64_t now_ms, int *fresh);

/* ---- password guessing (loginguard.c) ---- */
#define API_LG_FREE_FAILURES 5     /* failed grants in a row for a name from a client before it waits */
#define API_LG_MAX_WAIT_S 60       /* the longest wait */
#define API_LG_GLOBAL_PER_S 10     /* the server's budget of failed grants a second */
#define API_LG_GLOBAL_BURST 50     /* ... and at most this many at once */
struct api_loginguard;
/* max_hashes: secret checks at once (at least 1). NULL guard: no limits. */
struct api_loginguard *api_loginguard_new(int max_hashes);
void api_loginguard_free(struct api_loginguard *g);   /* NULL is a no-op */
/* Seconds a grant for the name from the client (its address) must still
 * wait before it is tried; 0: go. */
int api_loginguard_wait_s(struct api_loginguard *g, const char *name, const char *client,
                          int64_t now_ms);
/* Records a grant's outcome for the name from the client: a failure may
 * start a wait and spends the server's budget, a success clears both the
 * pair and the client. */
void api_loginguard_result(struct api_loginguard *g, const char *name, const char *client,
                           int ok, int64_t now_ms);
/* Takes one of the secret-check slots, waiting up to 5 s: 0, or -1 when
 * none came free. Each 0 is paired with api_loginguard_hash_end(). */
int api_loginguard_hash_begin(struct api_loginguard *g);
void api_loginguard_hash_end(struct api_loginguard *g);

/* ---- rate limiting (ratelimit.c) ---- */
struct api_ratelimit;
/* Token buckets of rate_per_s requests a second (0: no limit), one per
 * key: a client address, or a signed-in principal. */
struct api_ratelimit *api_ratelimit_new(int rate_per_s);
void api_ratelimit_free(struct api_ratelimit *rl);
/* Takes `cost` tokens from the key's bucket; 0 allowed, else the
 * seconds to wait. */
int api_ratelimit_take(struct api_ratelimit *rl, const char *key, int cost, int64_t now_ms);

/* ---- metrics (metrics.c) ---- */
void api_metrics_request(int status, int64_t us);
void api_metrics_submitted(void);
void api_metrics_render(struct api_req *r);

/* ---- the dashboard's files (static.c) ---- */
/* Finds the web root (see static.c) into root; -1 if --web-root is bad. */
int api_static_init(const struct api_config *cfg, char *root, size_t len);
/* Is r a request for a file (GET outside /api/) that no route matched? */
int api_static_wants(const struct api_req *r);
/* Replies with the file under the web root, or 404. */
void api_static_serve(struct api_req *r);

/* ---- handlers ---- */
void api_h_token_v1(struct api_req *r);
void api_h_token_v2(struct api_req *r);
void api_h_app_token(struct api_req *r);   /* /v1/k8s/auth/oauth/apptoken */
void api_h_healthz(struct api_req *r);
void api_h_metrics(struct api_req *r);
void api_h_dashboard(struct api_req *r);
void api_h_clusters(struct api_req *r);
void api_h_cluster_get(struct api_req *r);
void api_h_cluster_nodes(struct api_req *r);   /* API_ARG_COUNT */
/* Is the path's first parameter allotd's cluster uuid? Replies `status`
 * (404 or 400, whichever the operation lists) when it is not. */
int api_cluster_path_ok(struct api_req *r, int status);
/* Does a body's clusterId name allotd's cluster ("": none given)? Replies
 * 400 when it does not. */
int api_cluster_id_ok(struct api_req *r, const char *cluster_id);
void api_h_nodes(struct api_req *r);           /* API_ARG_COUNT */
void api_h_readyz(struct api_req *r);
/* A create's storage answer rc: 1 when DB_OK; else replied (DB_ECONFLICT:
 * 400 with `taken`, as Run:ai's creates list no 409), 0. (h_pools.c) */
int api_created(struct api_req *r, int rc, const char *taken);
/* h_ntopo.c: network topologies */
void api_h_ntopo_list(struct api_req *r);       /* API_ARG_COUNT */
void api_h_ntopo_create(struct api_req *r);
void api_h_ntopo_get(struct api_req *r);
void api_h_ntopo_delete(struct api_req *r);
/* Is key a node label key ([prefix/]name, Run:ai's NetworkTopologyLevels)? */
int api_label_key_ok(const char *key);
/* The levels (a JSON array, a new reference) of the network topology of
 * that name or id; NULL if none. */
json_t *api_ntopo_levels(struct api_req *r, const char *name);
void api_h_pools_list(struct api_req *r);      /* API_ARG_COUNT */
void api_h_pools_create(struct api_req *r);
/* The stored placementStrategy word of a pool that names no GPU placement
 * (db_placement_words: SCHED_DEFAULT_GPU_PLACEMENT's word). */
int api_pool_default_gpu_placement(void);
void api_h_pool_get(struct api_req *r);
void api_h_pool_change(struct api_req *r);     /* PUT, or PATCH: API_ARG_PATCH */
void api_h_pool_delete(struct api_req *r);
void api_h_org_priorities(struct api_req *r);
/* h_policy.c: workload policies (/api/v2/policy) */
void api_h_policy_list(struct api_req *r);
void api_h_policy_get(struct api_req *r);
void api_h_policy_put(struct api_req *r);    /* PUT; PATCH with API_ARG_PATCH */
void api_h_policy_delete(struct api_req *r);
/* Applies the project's policies for workloads of type to a submission's
 * spec (defaults filled in place, rules checked): 0, or -1 after a 400
 * naming the field, the rule and its scope. */
int api_policy_submission(struct api_req *r, json_t *spec, int type,
                          const struct api_project *project);
/* Does part (the part of a spec an asset gives, changed in place) comply
 * with the project's policies for workloads of type: its values by the
 * rules, canEdit included, a field it leaves out not required? 0, 1 (not:
 * why in msg), or -1 answered (the policies could not be read). */
int api_policy_comply(struct api_req *r, json_t *part, int type,
                      const struct api_project *project, char *msg, size_t len);
/* h_wlprops.c: workload types, categories and priorities (read-only) */
void api_h_wl_types(struct api_req *r);
void api_h_wl_type_get(struct api_req *r);
void api_h_wl_categories(struct api_req *r);
void api_h_wl_category_get(struct api_req *r);
void api_h_wl_priorities(struct api_req *r);
void api_h_wl_metrics(struct api_req *r);
void api_h_wl_pod_metrics(struct api_req *r);
void api_h_cluster_metrics(struct api_req *r);
/* GET /clusters/{uuid}/metrics?aggregation=: every project's allocation
 * and quota summed, max and mean per slot (h_series.c). */
void api_cluster_metrics_aggregated(struct api_req *r);
/* GET /clusters/{uuid}/metrics?groupBy=Project|Department (kind: DB_PROJECT
 * or DB_DEPARTMENT): one measurement per type and queue (h_series.c). */
void api_cluster_metrics_by_queue(struct api_req *r, int kind);
void api_h_pool_metrics(struct api_req *r);
void api_h_node_metrics(struct api_req *r);
void api_h_wl_batch(struct api_req *r);
void api_h_wl_submissions(struct api_req *r);
/* Departments and projects (h_org.c; metrics: h_series.c): one handler a
 * verb for both, API_ARG_PROJECT for projects; list takes API_ARG_COUNT,
 * change and resources API_ARG_PATCH. */
void api_h_queues_list(struct api_req *r);
void api_h_queues_create(struct api_req *r);
void api_h_queue_get(struct api_req *r);
void api_h_queue_change(struct api_req *r);
void api_h_queue_delete(struct api_req *r);
void api_h_queue_resources(struct api_req *r);
void api_h_queue_metrics(struct api_req *r);
void api_h_users_list(struct api_req *r);
void api_h_users_create(struct api_req *r);
void api_h_user_get(struct api_req *r);
void api_h_user_delete(struct api_req *r);
void api_h_user_logout(struct api_req *r);
void api_h_user_password(struct api_req *r);
void api_h_me_password(struct api_req *r);
void api_h_service_accounts_list(struct api_req *r);
void api_h_service_accounts_create(struct api_req *r);
void api_h_service_account_get(struct api_req *r);
void api_h_service_account_patch(struct api_req *r);
void api_h_service_account_secret(struct api_req *r);
void api_h_service_account_delete(struct api_req *r);
void api_h_apps_create(struct api_req *r);         /* /apps: service accounts by another name */
void api_h_app_secret(struct api_req *r);
/* A user's access keys (also as Run:ai's user applications: API_ARG_USER_APP
 * on list and create); list and delete with API_ARG_ADMIN: everyone's. */
void api_h_keys_list(struct api_req *r);
void api_h_key_create(struct api_req *r);
void api_h_key_get(struct api_req *r);
void api_h_key_secret(struct api_req *r);
void api_h_key_delete(struct api_req *r);
void api_h_roles(struct api_req *r);
void api_h_role_get(struct api_req *r);
void api_h_permissions(struct api_req *r);
void api_h_rules_list(struct api_req *r);
void api_h_rules_create(struct api_req *r);
void api_h_rule_get(struct api_req *r);
void api_h_rule_delete(struct api_req *r);
void api_h_rules_batch(struct api_req *r);          /* delete, or validate_delete */
void api_h_rules_batch_create(struct api_req *r);
void api_h_permitted_scopes(struct api_req *r);
void api_h_me_rules(struct api_req *r);
void api_h_me_rules_count(struct api_req *r);
void api_h_wl_create_training(struct api_req *r);
void api_h_wl_create_workspace(struct api_req *r);
void api_h_wl_create_distributed(struct api_req *r);
void api_h_wl_create_inference(struct api_req *r);
void api_h_wl_list(struct api_req *r);
void api_h_wl_count(struct api_req *r);
void api_h_wl_get(struct api_req *r);
void api_h_wl_delete(struct api_req *r);
void api_h_wl_suspend(struct api_req *r);
void api_h_wl_resume(struct api_req *r);
void api_h_wl_events(struct api_req *r);
void api_h_wl_evictions(struct api_req *r);
void api_h_wl_telemetry(struct api_req *r);
/* GET /org-unit/projects/telemetry (API_ARG_PROJECT) and
 * /org-unit/departments/telemetry (h_telemetry.c). */
void api_h_org_telemetry(struct api_req *r);
void api_h_nodes_telemetry(struct api_req *r);
void api_h_wl_evictions_count(struct api_req *r);
void api_h_wl_pods(struct api_req *r);
void api_h_pods_list(struct api_req *r);
void api_h_wl_history(struct api_req *r);
void api_h_wl_inference_patch(struct api_req *r);
/* What-if (h_whatif.c): a checked submission's dry run, answered 200
 * with what the next scheduling turn would do with it; nothing stored. */
void api_wl_dry_run(struct api_req *r, const struct db_workload *w);
void api_h_whatif(struct api_req *r);
/* The path's workload if the caller may read it (else a 404), held for
 * `perm` if it asks more (else a 403); -1 when it replied. */
int api_wl_load(struct api_req *r, unsigned perm, struct db_workload *w);
/* The id of pod idx of w, as GET /workloads/{id}/pods gives it. */
void api_pod_id(const struct db_workload *w, int idx, char *out, size_t len);
/* One event of w as Run:ai's Event. */
json_t *api_wl_event_json(const struct db_workload *w, const struct db_event *ev);
/* The pods of w as GET /workloads/{id}/pods lists them; NULL replied. */
json_t *api_wl_pods_json(struct api_req *r, const struct db_workload *w);
/* Replies the events of w from `from` on, before `to` (0: no end), with
 * offset, limit and sortOrder (GET /workloads/{id}/events). */
void api_wl_events_reply(struct api_req *r, const struct db_workload *w, int64_t from,
                         int64_t to);
/* Replies Run:ai's HistoryRecords of w's events between from and to, then
 * the phase *now (GET /workloads/{id}/history). */
struct api_phase_at {
    const char *phase, *message;
    int64_t at;
};
void api_wl_history_reply(struct api_req *r, const struct db_workload *w, int64_t from,
                          int64_t to, const struct api_phase_at *now);
/* Reports (h_reports.c); api_h_reports also counts (API_ARG_COUNT). */
void api_h_reports(struct api_req *r);
void api_h_reports_availability(struct api_req *r);
void api_h_report_create(struct api_req *r);
void api_h_report_get(struct api_req *r);
void api_h_report_file(struct api_req *r);
void api_h_report_delete(struct api_req *r);
/* Inference revisions (h_revisions.c). */
void api_h_revisions(struct api_req *r);
void api_h_revisions_count(struct api_req *r);
void api_h_revision_get(struct api_req *r);
void api_h_revision_events(struct api_req *r);
void api_h_revision_history(struct api_req *r);
void api_h_revision_pods(struct api_req *r);

/* ---- a distributed workload's pods finding each other (dist_env.c) ---- */
struct api_dist {
    char framework[16];           /* PyTorch, TF, JAX, XGBoost, MPI ("": PyTorch) */
    int has_master;               /* the first pod is a master (TF chief, MPI launcher) */
    const struct db_pod *pods;    /* the bound pods, by index: they meet */
    int n;
    int port;                     /* the first of the workload's rendezvous ports */
    int min_pods, max_pods;       /* the gang's minimum and its most pods */
    int slots;                    /* MPI: slotsPerWorker */
    const char *name;             /* the workload's name (MPI's host names) */
};
/* Appends to env ([{name, value}]) what pod idx is told; -1 if idx is not
 * one of d's pods. */
int api_dist_env(const struct api_dist *d, int idx, json_t *env);
/* The position of pod idx among d's pods (its rank), or -1. */
int api_dist_rank(const struct api_dist *d, int idx);
/* MPI's host file: "HOST slots=N" a worker, HOST its pod name (malloc'd;
 * NULL: no memory). */
char *api_dist_hostfile(const struct api_dist *d);
/* An MPI workload's exec key: HMAC-SHA256(secret, label and workload id),
 * hex; never stored. 0, or -1. */
int api_dist_mpi_key(const unsigned char *secret, int secret_len, const char *workload_id,
                     char out[65]);
/* Pod idx's "mpi" object (its role, the key, its endpoint's port or the
 * workers' endpoints); NULL when the workload has no launcher. */
json_t *api_dist_mpi(const struct api_dist *d, int idx, const char *key);

/* ---- allot-agent's side (h_agent.c, h_logs.c) ---- */
/* Checks an API_AGENT route's bearer agent token, filling agent_token and
 * agent_node; replies 401 itself and returns -1 when it is not valid. */
int api_agent_authenticate(struct api_req *r);
void api_h_agent_tokens_create(struct api_req *r);
void api_h_agent_tokens_list(struct api_req *r);
void api_h_agent_token_revoke(struct api_req *r);
void api_h_agent_register(struct api_req *r);
void api_h_agent_heartbeat(struct api_req *r);
void api_h_agent_logs_append(struct api_req *r);
void api_h_agent_nodes(struct api_req *r);
void api_h_agent_node_approve(struct api_req *r);
void api_h_agent_node_set(struct api_req *r);
void api_h_wl_logs(struct api_req *r);
/* Ends the log follows in progress; the server is stopping. */
void api_logs_stop(void);
/* Removes the logs of purged workloads (seqs[0..n)) of the database at
 * db_path. */
void api_logs_drop(const char *db_path, const int64_t *seqs, int n);

#endif /* ALLOT_API_H */
