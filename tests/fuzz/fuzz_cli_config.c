/*
 * fuzz_cli_config.c: the CLI's config file (~/.allot/config.json, or the
 * file ALLOT_CONFIG names; cli/config.c), read by config_load() as every
 * `allot` command reads it.
 *
 * Input: the file's bytes, written with mode 0600 to the file ALLOT_CONFIG
 * names.
 *
 * Checked: config_load() answers 0 or 1; after a 0 the strings it took
 * are terminated copies, and the configuration survives config_save()
 * and config_load() again unchanged (what the CLI writes back after a
 * login or `allot config set`).
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"

static char path[64];
static int devnull = -1, saved_err = -1;

static void cleanup(void)
{
    unlink(path);
}

static void setup(void)
{
    snprintf(path, sizeof(path), "/tmp/allot-fuzz-cli-config-%ld.json", (long)getpid());
    FUZZ_ASSERT(setenv("ALLOT_CONFIG", path, 1) == 0);
    devnull = open("/dev/null", O_WRONLY);
    saved_err = dup(2);
    FUZZ_ASSERT(devnull >= 0 && saved_err >= 0);
    atexit(cleanup);
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void same_check(const struct cli_config *a, const struct cli_config *b)
{
    FUZZ_ASSERT(same_str(a->path, b->path));
    FUZZ_ASSERT(same_str(a->url, b->url));
    FUZZ_ASSERT(same_str(a->user, b->user));
    FUZZ_ASSERT(a->service_account == b->service_account);
    FUZZ_ASSERT(same_str(a->access_token, b->access_token));
    FUZZ_ASSERT(same_str(a->refresh_token, b->refresh_token));
    FUZZ_ASSERT(a->expires_at == b->expires_at);
    FUZZ_ASSERT(same_str(a->project, b->project));
}

/* config_load() with stderr (its messages) sent to /dev/null. */
static int load_quiet(struct cli_config *c)
{
    int rc;

    fflush(stderr);
    dup2(devnull, 2);
    rc = config_load(c);
    fflush(stderr);
    dup2(saved_err, 2);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cli_config first, again;
    int fd, rc;

    if (devnull < 0)
        setup();
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FUZZ_ASSERT(fd >= 0);
    FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
    FUZZ_ASSERT(close(fd) == 0);
    rc = load_quiet(&first);
    FUZZ_ASSERT(rc == CLI_OK || rc == CLI_FAIL);
    if (rc == CLI_OK) {
        FUZZ_ASSERT(first.path && strcmp(first.path, path) == 0);
        FUZZ_ASSERT(config_save(&first) == CLI_OK);
        FUZZ_ASSERT(load_quiet(&again) == CLI_OK);
        same_check(&first, &again);
        config_clear(&again);
    }
    config_clear(&first);
    return 0;
}
