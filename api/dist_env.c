/*
 * dist_env.c: what the pods of a distributed workload are told so that
 * they find each other, in each framework's own terms, as its launcher or
 * training operator would tell them. allotd computes it when an agent is
 * handed a pod (h_agent.c); the agent sets it in the pod's environment
 * after the workload's own variables (so these win).
 *
 * The pods that meet are those bound when the pod is handed out: a gang
 * is bound whole in one cycle, so every pod of it sees the same list; pod
 * ranks are positions in that list by pod index. The master is the first
 * of them, reached at its node's address (the agent's, as allotd knows
 * it) on the first port of the workload's block (db_rendezvous_ports());
 * pod k of the list listens on port + k where a framework gives every
 * pod a port of its own (TF).
 *
 *   framework   what each pod gets
 *   PyTorch     MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK=0,
 *               LOCAL_WORLD_SIZE=1, GROUP_RANK, NODE_RANK (a pod is a
 *               node with one process), and torchrun's PET_MASTER_ADDR,
 *               PET_MASTER_PORT, PET_NNODES, PET_NODE_RANK,
 *               PET_NPROC_PER_NODE=1; an elastic workload (minReplicas
 *               below its pods) gets PET_NNODES=MIN:MAX and a c10d
 *               rendezvous at the master (PET_RDZV_BACKEND, PET_RDZV_ENDPOINT)
 *   TF          TF_CONFIG: cluster {chief: [master], worker: [...]} (no
 *               chief when the workload has no master), task {type, index}
 *   JAX         JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID
 *   XGBoost     MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, WORKER_ADDRS,
 *               WORKER_PORT (Kubeflow's XGBoostJob), and rabit's
 *               DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_NUM_WORKER,
 *               DMLC_TASK_ID
 *   MPI         a host file (every worker by its pod name with
 *               slotsPerWorker slots; the master is the launcher),
 *               OMPI_MCA_orte_default_hostfile and ALLOT_MPI_HOSTFILE name
 *               it (the agent writes it into the pod's directory),
 *               ALLOT_MPI_SLOTS_PER_WORKER; the ranks' own variables are
 *               mpirun's to set. With a launcher, each pod also gets the
 *               pod's "mpi" object (api_dist_mpi()): the workload's exec
 *               key, and the port a worker's exec endpoint listens on
 *               (port + rank) or, for the launcher, where each worker's
 *               is, by host name (the agent's mpi_exec.c uses them)
 * Every framework's pods also get ALLOT_DIST_MASTER (address:port),
 * ALLOT_DIST_RANK and ALLOT_DIST_WORLD_SIZE.
 */
#include "api.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(json_t *env, const char *name, const char *value)
{
    json_array_append_new(env, json_pack("{s:s, s:s}", "name", name, "value", value));
}

static void put_int(json_t *env, const char *name, long long v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%lld", v);
    put(env, name, buf);
}

static const char *address_of(const struct db_pod *p)
{
    return p->address[0] ? p->address : "127.0.0.1";
}

static void pytorch(json_t *env, const struct api_dist *d, int rank)
{
    const char *master = address_of(&d->pods[0]);
    char nnodes[32], endpoint[96];

    put(env, "MASTER_ADDR", master);
    put_int(env, "MASTER_PORT", d->port);
    put_int(env, "WORLD_SIZE", d->n);
    put_int(env, "RANK", rank);
    put(env, "LOCAL_RANK", "0");
    put(env, "LOCAL_WORLD_SIZE", "1");
    put_int(env, "GROUP_RANK", rank);
    put_int(env, "NODE_RANK", rank);
    put(env, "PET_MASTER_ADDR", master);
    put_int(env, "PET_MASTER_PORT", d->port);
    put_int(env, "PET_NODE_RANK", rank);
    put(env, "PET_NPROC_PER_NODE", "1");
    if (d->min_pods < d->max_pods) {
        snprintf(nnodes, sizeof(nnodes), "%d:%d", d->min_pods, d->max_pods);
        snprintf(endpoint, sizeof(endpoint), "%s:%d", master, d->port);
        put(env, "PET_NNODES", nnodes);
        put(env, "PET_RDZV_BACKEND", "c10d");
        put(env, "PET_RDZV_ENDPOINT", endpoint);
    } else {
        put_int(env, "PET_NNODES", d->n);
    }
}

static void tensorflow(json_t *env, const struct api_dist *d, int rank)
{
    json_t *cluster = json_object(), *workers = json_array(), *cfg;
    char hostport[96];
    char *text;
    int k;

    for (k = 0; k < d->n; k++) {
        snprintf(hostport, sizeof(hostport), "%s:%d", address_of(&d->pods[k]), d->port + k);
        if (k == 0 && d->has_master)
            json_object_set_new(cluster, "chief", json_pack("[s]", hostport));
        else
            json_array_append_new(workers, json_string(hostport));
    }
    if (json_array_size(workers) > 0)
        json_object_set(cluster, "worker", workers);
    json_decref(workers);
    cfg = json_pack("{s:o, s:{s:s, s:i}}", "cluster", cluster, "task", "type",
                    rank == 0 && d->has_master ? "chief" : "worker", "index",
                    d->has_master ? (rank == 0 ? 0 : rank - 1) : rank);
    text = cfg ? json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text)
        put(env, "TF_CONFIG", text);
    free(text);
    json_decref(cfg);
}

static void jax(json_t *env, const struct api_dist *d, int rank)
{
    char coord[96];

    snprintf(coord, sizeof(coord), "%s:%d", address_of(&d->pods[0]), d->port);
    put(env, "JAX_COORDINATOR_ADDRESS", coord);
    put_int(env, "JAX_NUM_PROCESSES", d->n);
    put_int(env, "JAX_PROCESS_ID", rank);
}

static void xgboost(json_t *env, const struct api_dist *d, int rank)
{
    const char *master = address_of(&d->pods[0]);
    char addrs[1024] = "";
    size_t used = 0;
    int k;

    for (k = 1; k < d->n && used < sizeof(addrs); k++)
        used += (size_t)snprintf(addrs + used, sizeof(addrs) - used, "%s%s", k > 1 ? "," : "",
                                 address_of(&d->pods[k]));
    put(env, "MASTER_ADDR", master);
    put_int(env, "MASTER_PORT", d->port);
    put_int(env, "WORLD_SIZE", d->n);
    put_int(env, "RANK", rank);
    put(env, "WORKER_ADDRS", addrs);
    put_int(env, "WORKER_PORT", d->port);
    put(env, "DMLC_TRACKER_URI", master);
    put_int(env, "DMLC_TRACKER_PORT", d->port);
    put_int(env, "DMLC_NUM_WORKER", d->n);
    put_int(env, "DMLC_TASK_ID", rank);
}

/* The first worker's position: 1 after a launcher, else 0. */
static int first_worker(const struct api_dist *d)
{
    return d->has_master && d->n > 1 ? 1 : 0;
}

/* Pod k's host name in the host file: its pod name, NAME-INDEX-0. */
static void host_of(const struct api_dist *d, int k, char *out, size_t len)
{
    snprintf(out, len, "%s-%d-0", d->name, d->pods[k].idx);
}

char *api_dist_hostfile(const struct api_dist *d)
{
    size_t cap = (size_t)d->n * (DB_NAME_LEN + 48) + 1, used = 0;
    char *text = malloc(cap), host[DB_NAME_LEN + 24];
    int k;

    if (!text)
        return NULL;
    text[0] = '\0';
    for (k = first_worker(d); k < d->n; k++) {
        host_of(d, k, host, sizeof(host));
        used += (size_t)snprintf(text + used, cap - used, "%s slots=%d\n", host, d->slots);
    }
    return text;
}

int api_dist_mpi_key(const unsigned char *secret, int secret_len, const char *workload_id,
                     char out[65])
{
    static const char label[] = "allot mpi exec\n";
    unsigned char md[EVP_MAX_MD_SIZE];
    char msg[sizeof(label) + DB_ID_LEN];
    unsigned int n = 0, i;

    out[0] = '\0';
    snprintf(msg, sizeof(msg), "%s%s", label, workload_id);
    if (!HMAC(EVP_sha256(), secret, secret_len, (unsigned char *)msg, strlen(msg), md, &n) ||
        n != 32)
        return -1;
    for (i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}

json_t *api_dist_mpi(const struct api_dist *d, int idx, const char *key)
{
    int rank = api_dist_rank(d, idx), k;
    char host[DB_NAME_LEN + 24];
    json_t *workers, *o;

    if (rank < 0 || !first_worker(d))
        return NULL;
    if (rank > 0)
        return json_pack("{s:s, s:s, s:i}", "role", "worker", "key", key, "port", d->port + rank);
    workers = json_array();
    for (k = 1; workers && k < d->n; k++) {
        host_of(d, k, host, sizeof(host));
        json_array_append_new(workers, json_pack("{s:s, s:s, s:i}", "host", host, "address",
                                                 address_of(&d->pods[k]), "port", d->port + k));
    }
    o = json_pack("{s:s, s:s, s:o}", "role", "launcher", "key", key, "workers", workers);
    return o;
}

int api_dist_rank(const struct api_dist *d, int idx)
{
    int k;

    for (k = 0; k < d->n; k++)
        if (d->pods[k].idx == idx)
            return k;
    return -1;
}

int api_dist_env(const struct api_dist *d, int idx, json_t *env)
{
    int rank = api_dist_rank(d, idx);
    char master[96];

    if (rank < 0 || d->n < 1)
        return -1;
    snprintf(master, sizeof(master), "%s:%d", address_of(&d->pods[0]), d->port);
    put(env, "ALLOT_DIST_MASTER", master);
    put_int(env, "ALLOT_DIST_RANK", rank);
    put_int(env, "ALLOT_DIST_WORLD_SIZE", d->n);
    if (strcmp(d->framework, "PyTorch") == 0 || !d->framework[0])
        pytorch(env, d, rank);
    else if (strcmp(d->framework, "TF") == 0)
        tensorflow(env, d, rank);
    else if (strcmp(d->framework, "JAX") == 0)
        jax(env, d, rank);
    else if (strcmp(d->framework, "XGBoost") == 0)
        xgboost(env, d, rank);
    else if (strcmp(d->framework, "MPI") == 0)
        put_int(env, "ALLOT_MPI_SLOTS_PER_WORKER", d->slots);
    return 0;
}
