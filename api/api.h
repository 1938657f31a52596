/*
 * api.h: what the files of allotd share: the server context, the request
 * as handlers see it, the route table, replies, authentication and
 * authorization, and the scheduler thread's interface.
 *
 * Invariants:
 *   1. Every route is in api_routes[] with its method, pattern and the
 *      least permission it needs; the dispatcher authenticates before any
 *      handler that is not API_PUBLIC runs (default deny).
 *   2. Handlers check the caller's right on the object they touch
 *      (api_can()), not only the route's permission; objects in projects
 *      the caller cannot read answer 404, not 403.
 *   3. Every reply is JSON with a Content-Length (keep-alive safe), except
 *      /metrics (text) and / (HTML); errors are {code, message, details}
 *      outside the token endpoints.
 *   4. Secrets (passwords, client secrets, tokens, the key) are never
 *      logged or echoed.
 */
#ifndef ALLOT_API_H
#define ALLOT_API_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

#define API_BODY_MAX (1024 * 1024)
#define API_TOKEN_MAX 4096
#define API_PAGE_MAX 500
#define API_PAGE_DEFAULT 50
#define API_CLUSTER_ID "6a4e5f3c-1b2d-4c8e-9f00-a11070000001"
#define API_CLUSTER_NAME "allot"
#define API_ISSUER "allotd"
#define API_MAX_SIM 16

/* ---- configuration (config.c) ---- */
struct api_sim_spec {
    int machines, gpus;
    char pool[DB_NAME_LEN];
};

struct api_config {
    char db_path[512];
    char listen[128];
    char key_file[512];
    char config_file[512];
    int demo;
    int threads;
    int schedule_period_ms;
    int rate_limit;          /* requests per second per client; 0: off */
    int token_ttl_s;
    int n_sims;
    int sims_given;          /* --simulate-nodes seen (0x0 included) */
    struct api_sim_spec sims[API_MAX_SIM];
    char port_file[512];     /* if set, the bound port is written there */
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
    API_NODE_WRITE = 1 << 6
};

struct api_principal {
    struct db_user user;
    struct db_rule *rules;   /* malloc'd */
    int n_rules;
};

struct api_role {
    int id;
    const char *name;
    const char *description;
    unsigned perms;
};
extern const struct api_role api_roles[];
extern const int api_n_roles;
const struct api_role *api_role_find(int id);

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
};
/* Loads the key file, creating it with 32 random bytes (mode 0600) if
 * missing; refuses a short or group/world-readable key. */
int api_key_load(const char *path, struct api_keyring *out);
/* crypt(3) yescrypt hash of a secret; 0 on success. */
int api_secret_hash(const char *secret, char *out, size_t len);
int api_secret_check(const char *secret, const char *hash);
/* Random URL-safe string of n characters (n < len). */
int api_random_text(char *out, size_t len, int n);

enum api_token_type { API_TOKEN_ACCESS = 0, API_TOKEN_REFRESH = 1 };
/* Issues a signed HS256 token; *out is malloc'd (free()). */
int api_token_issue(const struct api_keyring *k, const struct db_user *u, int type,
                    int ttl_s, int64_t now_s, char **out);
/* Verifies signature (HS256 only), exp, nbf, iss and type; gives the
 * subject id and token version. 0 ok, -1 invalid. */
int api_token_verify(const struct api_keyring *k, const char *token, int type, int64_t now_s,
                     int64_t *user_id, int64_t *token_version);

/* ---- the scheduler thread (sched_loop.c) ---- */
struct api_sched;
struct api_share {
    int64_t queue_seq, pool_seq;
    int64_t fair[3], allocated[3], requested[3];
};
struct api_sched_stats {
    int64_t cycles, decisions, last_cycle_us, max_cycle_us, pending;
};
int api_sched_start(struct db *db, int period_ms, struct api_sched **out);
void api_sched_wake(struct api_sched *s);
/* Lets the running cycle finish, then joins the thread. NULL is a no-op. */
void api_sched_stop(struct api_sched *s);
/* The last cycle's fair share of a queue in a pool; 0 if none recorded. */
int api_sched_share(struct api_sched *s, int64_t queue_seq, int64_t pool_seq,
                    struct api_share *out);
void api_sched_get_stats(struct api_sched *s, struct api_sched_stats *out);
/* Runs one cycle now on the calling thread (tests); decisions count out. */
int api_sched_run_once(struct api_sched *s, int *n_decisions);

/* ---- the server (http.c) ---- */
struct api_app {
    struct api_config cfg;
    struct db *db;
    struct api_keyring key;
    struct api_sched *sched;
    struct api_ratelimit *rl;
    struct mg_context *mg;
    int port;
};

struct api_req {
    struct mg_connection *conn;
    struct api_app *app;
    const char *method;
    const char *path;
    const char *query;        /* may be NULL */
    const char *remote;
    const char *content_type; /* may be NULL */
    char params[2][DB_NAME_LEN];
    char *body;               /* NUL-terminated; malloc'd by the dispatcher */
    size_t body_len;
    struct api_principal who; /* filled for non-public routes */
    int status;               /* what was sent */
};

typedef void (*api_handler)(struct api_req *r);

struct api_route {
    const char *method;
    const char *pattern;      /* segments; "{x}" captures one */
    api_handler handler;
    unsigned perm;            /* enum api_perm: API_PUBLIC, API_AUTH or a right */
};
extern const struct api_route api_routes[];
extern const int api_n_routes;

int api_http_start(struct api_app *app);
void api_http_stop(struct api_app *app);

/* Replies; each takes ownership of `body` and sends a Content-Length. */
void api_reply(struct api_req *r, int status, json_t *body);
void api_reply_text(struct api_req *r, int status, const char *type, const char *text,
                    size_t len);
void api_error(struct api_req *r, int status, const char *message, const char *details);
/* Maps a DB_E* code to its HTTP status and replies with the error body. */
void api_db_error(struct api_req *r, int rc, const char *what);
/* The request body as a JSON object (strict: no duplicate keys); replies
 * 400 itself and returns NULL when it is not one. */
json_t *api_body_object(struct api_req *r);
/* A query parameter, URL-decoded into out; 0 if present. */
/* Finds name=value in an &-separated string (a query or a form body) and
 * URL-decodes the value into out; 0 if found. */
int api_form_get(const char *s, const char *name, char *out, size_t len);
int api_query(const struct api_req *r, const char *name, char *out, size_t len);
int64_t api_now_ms(void);
/* A name usable as a namespace: lowercase letters, digits and '-', <= 63. */
int api_valid_name(const char *s);
/* Formats ms since the epoch as ISO-8601 UTC ("...Z"); a json null for 0. */
json_t *api_time(int64_t ms);

/* ---- strict JSON input (json_in.c) ---- */
/* Rejects keys of obj not in the NULL-terminated allow-list: replies 400
 * naming the field and returns -1. */
int api_json_allow(struct api_req *r, json_t *obj, const char *const *allowed, const char *where);
/* Typed field getters: 0 ok or absent (out untouched), -1 replied 400. */
int api_json_str(struct api_req *r, json_t *obj, const char *key, char *out, size_t len,
                 int required);
int api_json_int(struct api_req *r, json_t *obj, const char *key, int64_t min, int64_t max,
                 int64_t *out);
int api_json_num(struct api_req *r, json_t *obj, const char *key, double min, double max,
                 double *out);
int api_json_bool(struct api_req *r, json_t *obj, const char *key, int *out);

/* ---- rate limiting (ratelimit.c) ---- */
struct api_ratelimit;
struct api_ratelimit *api_ratelimit_new(int rate_per_s);
void api_ratelimit_free(struct api_ratelimit *rl);
/* Takes `cost` tokens from the client's bucket; 0 allowed, else the
 * seconds to wait. */
int api_ratelimit_take(struct api_ratelimit *rl, const char *client, int cost, int64_t now_ms);

/* ---- metrics (metrics.c) ---- */
void api_metrics_request(int status, int64_t us);
void api_metrics_submitted(void);
void api_metrics_render(struct api_req *r);

/* ---- handlers ---- */
void api_h_token_v1(struct api_req *r);
void api_h_token_v2(struct api_req *r);
void api_h_healthz(struct api_req *r);
void api_h_metrics(struct api_req *r);
void api_h_dashboard(struct api_req *r);
void api_h_clusters(struct api_req *r);
void api_h_nodes(struct api_req *r);
void api_h_pools_list(struct api_req *r);
void api_h_pools_create(struct api_req *r);
void api_h_departments_list(struct api_req *r);
void api_h_departments_create(struct api_req *r);
void api_h_department_get(struct api_req *r);
void api_h_department_delete(struct api_req *r);
void api_h_department_resources(struct api_req *r);
void api_h_projects_list(struct api_req *r);
void api_h_projects_create(struct api_req *r);
void api_h_project_get(struct api_req *r);
void api_h_project_delete(struct api_req *r);
void api_h_project_resources(struct api_req *r);
void api_h_users_list(struct api_req *r);
void api_h_users_create(struct api_req *r);
void api_h_user_delete(struct api_req *r);
void api_h_user_logout(struct api_req *r);
void api_h_me_password(struct api_req *r);
void api_h_service_accounts_list(struct api_req *r);
void api_h_service_accounts_create(struct api_req *r);
void api_h_service_account_delete(struct api_req *r);
void api_h_roles(struct api_req *r);
void api_h_rules_list(struct api_req *r);
void api_h_rules_create(struct api_req *r);
void api_h_rule_get(struct api_req *r);
void api_h_rule_delete(struct api_req *r);
void api_h_me_rules(struct api_req *r);
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
void api_h_wl_pods(struct api_req *r);

#endif /* ALLOT_API_H */
