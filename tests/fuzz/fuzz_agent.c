/*
 * fuzz_agent.c: what allotd reads from an agent: the bodies of POST
 * /api/v1/agent/register and POST /api/v1/agent/heartbeat (the pods'
 * status reports and the GPU metrics), through the route handlers
 * themselves, api_h_agent_register() and api_h_agent_heartbeat(), on a
 * real database.
 *
 * The database, in a temporary directory made at the first input, holds
 * the pools "default" and "a100-pool" and two agent tokens: one whose
 * node "fuzz-node" is registered (the heartbeats' token) and one the
 * fuzzed registrations use.
 *
 * Input: one byte that picks the route (bit 0: heartbeat, else
 * registration), then the body.
 *
 * Checked: exactly one reply; a 4xx or 5xx is {code, message, details};
 * the only statuses are 200, 400, 409 (a registration naming another
 * node than its token's) and 413 (a body too deep); a 200 to a
 * registration names its node, pool, GPU count and lease, and a 200 to a
 * heartbeat gives an array of pods, the lease and a generation (and,
 * when it was asked to wait, whether it did: nobody may wait on the watch
 * here, so it is answered at once).
 */
#include "fuzz.h"

#include <civetweb.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_agent.h"

static struct api_app app;
static int64_t heartbeat_token, register_token;
static struct mg_request_info request_info;

/* The peer's address, which a registration without "address" takes. */
const struct mg_request_info *mg_get_request_info(const struct mg_connection *conn)
{
    (void)conn;
    return &request_info;
}

static int64_t token_add(const char *id)
{
    struct db_agent_token t;

    memset(&t, 0, sizeof(t));
    snprintf(t.id, sizeof(t.id), "%s", id);
    snprintf(t.name, sizeof(t.name), "%s", id);
    snprintf(t.secret_hash, sizeof(t.secret_hash), "%064d", 0);
    snprintf(t.created_by, sizeof(t.created_by), "admin");
    FUZZ_ASSERT(db_agent_token_insert(app.db, &t) == DB_OK);
    return t.seq;
}

static void node_register(int64_t token)
{
    struct db_agent_reg g;

    memset(&g, 0, sizeof(g));
    g.token_seq = token;
    snprintf(g.name, sizeof(g.name), "fuzz-node");
    snprintf(g.pool, sizeof(g.pool), "default");
    snprintf(g.address, sizeof(g.address), "127.0.0.1");
    g.n_gpus = 2;
    g.cpu_milli = g.mem_mib = -1;
    g.heartbeat_ms = 2000;
    g.labels = "{}";
    g.gpus = "[{\"index\":0,\"model\":\"A100\"},{\"index\":1,\"model\":\"A100\"}]";
    g.now_ms = 1;
    FUZZ_ASSERT(db_agent_register(app.db, &g) == DB_OK);
}

static void db_setup(void)
{
    static const char *const pools[] = {"default", "a100-pool"};
    app.db = fuzz_db_open("agent", pools, sizeof(pools) / sizeof(pools[0]));
    heartbeat_token = token_add("hbtoken00001");
    register_token = token_add("regtoken0001");
    node_register(heartbeat_token);
    app.cfg.agent_lease_ms = 10000;
    app.cfg.agent_margin_ms = 5000;
    /* a watch nobody may wait on: a heartbeat that asks to wait is
     * answered at once, "waited": false (assign_watch.c, Invariant 3) */
    app.watch = ctl_watch_new(0);
    FUZZ_ASSERT(app.watch != NULL);
    snprintf(request_info.remote_addr, sizeof(request_info.remote_addr), "127.0.0.1");
}

static void ok_check(int heartbeat)
{
    const char *body = fuzz_reply_body();
    json_t *o = json_loads(body, 0, NULL);

    FUZZ_ASSERT(json_is_object(o));
    FUZZ_ASSERT(json_is_integer(json_object_get(o, "leaseMs")));
    FUZZ_ASSERT(json_is_integer(json_object_get(o, "lostAfterMs")));
    if (heartbeat) {
        FUZZ_ASSERT(json_is_array(json_object_get(o, "pods")));
        FUZZ_ASSERT(json_is_integer(json_object_get(o, "generation")));
        FUZZ_ASSERT(!json_object_get(o, "waited") || json_is_boolean(json_object_get(o, "waited")));
    } else {
        FUZZ_ASSERT(json_is_string(json_object_get(o, "nodeId")));
        FUZZ_ASSERT(json_is_string(json_object_get(o, "name")));
        FUZZ_ASSERT(json_is_string(json_object_get(o, "nodePool")));
        FUZZ_ASSERT(json_integer_value(json_object_get(o, "gpuCount")) >= 0);
        FUZZ_ASSERT(json_integer_value(json_object_get(o, "gpuCount")) <= 64);
    }
    json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_req r;
    int heartbeat;

    if (size < 1)
        return 0;
    if (!app.db)
        db_setup();
    heartbeat = data[0] & 1;
    memset(&r, 0, sizeof(r));
    r.app = &app;
    r.method = "POST";
    r.path = heartbeat ? "/api/v1/agent/heartbeat" : "/api/v1/agent/register";
    r.remote = "127.0.0.1";
    r.body = fuzz_text(data + 1, size - 1);
    r.body_len = size - 1;
    r.agent_token = heartbeat ? heartbeat_token : register_token;
    fuzz_reply_reset();
    if (heartbeat)
        api_h_agent_heartbeat(&r);
    else
        api_h_agent_register(&r);
    fuzz_reply_check(&r, 0);
    FUZZ_ASSERT(r.status == 200 || r.status == 400 || r.status == 409 || r.status == 413);
    FUZZ_ASSERT(heartbeat ? r.status != 409 : 1);
    if (r.status == 200)
        ok_check(heartbeat);
    free(r.body);
    return 0;
}
