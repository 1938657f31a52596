/*
 * fuzz_allotd_config.c: allotd's config file ("key = value" lines, '#'
 * comments; api/config.c), read as `allotd --config FILE` reads it:
 * api_config_parse() on that command line.
 *
 * Input: the file's bytes, written to one temporary file.
 *
 * Checked: the parse answers 0 or -1 (help and version exist only on the
 * command line); after a 0 every field is set and in the range its
 * option allows (config.c's invariant), every string is terminated, and
 * each simulated-node group has machines, at most 64 GPUs, a pool and a
 * device memory. And comments change nothing: the same file with the
 * text of every comment removed (each '#' to its line's end; files
 * without NUL bytes) gets the same answer and the same configuration.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static int devnull = -1, saved_err = -1;

static void cleanup(void)
{
    unlink(path);
}

static void setup(void)
{
    snprintf(path, sizeof(path), "/tmp/allot-fuzz-allotd-config-%ld.conf", (long)getpid());
    devnull = open("/dev/null", O_WRONLY);
    saved_err = dup(2);
    FUZZ_ASSERT(devnull >= 0 && saved_err >= 0);
    atexit(cleanup);
}

#define TERMINATED(field) FUZZ_ASSERT(memchr(field, 0, sizeof(field)) != NULL)
#define IN(v, lo, hi) FUZZ_ASSERT((v) >= (lo) && (v) <= (hi))

static void config_check(const struct api_config *c)
{
    int i;

    TERMINATED(c->db_path);
    TERMINATED(c->listen);
    TERMINATED(c->key_file);
    TERMINATED(c->port_file);
    TERMINATED(c->metrics_listen);
    TERMINATED(c->web_root);
    FUZZ_ASSERT(c->db_path[0] && c->listen[0] && c->key_file[0]);
    FUZZ_ASSERT(c->demo == 0 || c->demo == 1);
    FUZZ_ASSERT(c->init == 0);
    IN(c->threads, 2, 1024);
    IN(c->request_timeout_ms, 100, 600000);
    IN(c->schedule_period_ms, 1, 3600000);
    IN(c->sample_period_ms, 10, 3600000);
    IN(c->retention_days, 0, 36500);
    IN(c->rate_limit, 0, 10000000);
    IN(c->secret_checks, 1, 1024);
    IN(c->secret_hash_cost, 1, 11);
    IN(c->agent_lease_ms, 300, 3600000);
    IN(c->agent_margin_ms, 100, 3600000);
    IN(c->token_ttl_s, 1, 86400);
    IN(c->token_leeway_s, 0, 300);
    IN(c->leader_lease_ms, 100, 3600000);  /* the defaults filled in, on SQLite too */
    IN(c->leader_renew_ms, 10, CTL_LEADER_LOCAL(c->leader_lease_ms) - 1);
    IN(c->leader_ask_ms, 10, 3600000);
    IN(c->rendezvous_first, 1024, 65535);
    IN(c->rendezvous_last, c->rendezvous_first, 65535);
    IN(c->n_sims, 0, API_MAX_SIM);
    for (i = 0; i < c->n_sims; i++) {
        const struct api_sim_spec *s = &c->sims[i];
        IN(s->machines, 1, 10000);
        IN(s->gpus, 0, 64);
        TERMINATED(s->pool);
        TERMINATED(s->node_type);
        FUZZ_ASSERT(s->pool[0] && s->gpu_memory_mib > 0);
    }
}

/* Writes data to the file and parses it; stderr (the parser's messages)
 * goes to /dev/null meanwhile. */
static int parse(const uint8_t *data, size_t size, struct api_config *cfg)
{
    char *argv[] = {"allotd", "--config", path, NULL};
    FILE *fp;
    int rc;

    fp = fopen(path, "wb");
    FUZZ_ASSERT(fp != NULL);
    FUZZ_ASSERT(fwrite(data, 1, size, fp) == size);
    FUZZ_ASSERT(fclose(fp) == 0);
    fflush(stderr);
    dup2(devnull, 2);
    rc = api_config_parse(cfg, 3, argv);
    fflush(stderr);
    dup2(saved_err, 2);
    return rc;
}

/* data without the text of its comments, into out (size bytes at most);
 * its length. */
static size_t uncommented(const uint8_t *data, size_t size, uint8_t *out)
{
    size_t i, n = 0;
    int in_comment = 0;

    for (i = 0; i < size; i++) {
        if (data[i] == '\n')
            in_comment = 0;
        else if (data[i] == '#')
            in_comment = 1;
        if (!in_comment)
            out[n++] = data[i];
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_config cfg, plain;
    uint8_t *stripped;
    size_t n;
    int rc;

    if (devnull < 0)
        setup();
    rc = parse(data, size, &cfg);
    FUZZ_ASSERT(rc == 0 || rc == -1);
    if (rc == 0)
        config_check(&cfg);
    if (memchr(data, 0, size) || !memchr(data, '#', size))
        return 0;
    stripped = malloc(size + 1);
    FUZZ_ASSERT(stripped != NULL);
    n = uncommented(data, size, stripped);
    FUZZ_ASSERT(parse(stripped, n, &plain) == rc);
    if (rc == 0)
        FUZZ_ASSERT(memcmp(&cfg, &plain, sizeof(cfg)) == 0);
    free(stripped);
    return 0;
}
