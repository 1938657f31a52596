/*
 * test_agent.c: allot-agent's helpers: options, the token file's mode,
 * command lines split like a shell without expansion, nvidia-smi's CSV
 * (through a fake nvidia-smi), commands run with a timeout, and the file
 * operations the pod directories rely on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent.h"

static char dir[64];

static void write_file(const char *name, const char *text, int mode)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, (mode_t)mode);
}

static void test_split_words(void **state)
{
    char **argv = NULL;
    int argc = 0;

    (void)state;
    assert_int_equal(split_words("python  -x 'my script.py' \"a \\\"b\\\"\" c\\ d $HOME ''",
                                 &argv, &argc), 0);
    assert_int_equal(argc, 7);
    assert_string_equal(argv[0], "python");
    assert_string_equal(argv[1], "-x");
    assert_string_equal(argv[2], "my script.py");
    assert_string_equal(argv[3], "a \"b\"");
    assert_string_equal(argv[4], "c d");
    assert_string_equal(argv[5], "$HOME"); /* nothing is expanded */
    assert_string_equal(argv[6], "");
    assert_null(argv[7]);
    /* appending: the args after the command */
    assert_int_equal(split_words("-c 'exit 3'", &argv, &argc), 0);
    assert_int_equal(argc, 9);
    assert_string_equal(argv[8], "exit 3");
    free_words(argv);
    argv = NULL;
    argc = 0;
    assert_int_equal(split_words("   ", &argv, &argc), 0);
    assert_int_equal(argc, 0);
    assert_int_equal(split_words("echo 'unterminated", &argv, &argc), -1);
    free_words(argv);
}

static void test_options(void **state)
{
    struct agent_opts o;
    char *ok[] = {"allot-agent", "--server", "http://h:1/", "--token-file", "/t", "--name", "n1",
                  "--gpus", "2", "--heartbeat-ms", "500", NULL};
    char *bad_gpus[] = {"allot-agent", "--server", "u", "--token-file", "t", "--gpus", "x", NULL};
    char *no_server[] = {"allot-agent", "--token-file", "t", NULL};
    char *short_orphan[] = {"allot-agent", "--server", "u", "--token-file", "t",
                            "--orphan-timeout-ms", "300", NULL};

    (void)state;
    assert_int_equal(agent_opts_parse(&o, 11, ok), 0);
    assert_string_equal(o.server, "http://h:1");
    assert_int_equal(o.gpus, 2);
    assert_int_equal(o.orphan_ms, 2000);
    assert_string_equal(o.runtime, "auto");
    assert_int_equal(agent_opts_parse(&o, 7, bad_gpus), -1);
    assert_int_equal(agent_opts_parse(&o, 3, no_server), -1);
    assert_int_equal(agent_opts_parse(&o, 7, short_orphan), -1);
}

static void test_token_file(void **state)
{
    char path[128], tok[64];

    (void)state;
    write_file("token", "abc.def\n", 0600);
    snprintf(path, sizeof(path), "%s/token", dir);
    assert_int_equal(agent_read_token(path, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "abc.def");
    chmod(path, 0644);
    assert_int_equal(agent_read_token(path, tok, sizeof(tok)), -1);
    write_file("empty", "\n", 0600);
    snprintf(path, sizeof(path), "%s/empty", dir);
    assert_int_equal(agent_read_token(path, tok, sizeof(tok)), -1);
}

static void test_nvidia_smi(void **state)
{
    struct gpu_info g[4];
    char smi[128];

    (void)state;
    write_file("nvidia-smi",
               "#!/bin/sh\n"
               "echo '0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559, 1024, 42'\n"
               "echo '1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559, [N/A], [N/A]'\n",
               0700);
    snprintf(smi, sizeof(smi), "%s/nvidia-smi", dir);
    assert_int_equal(gpu_query(smi, 5000, g, 4), 2);
    assert_string_equal(g[0].uuid, "GPU-aaaa");
    assert_string_equal(g[0].model, "NVIDIA H100 80GB HBM3");
    assert_int_equal(g[0].mem_total_mib, 81559);
    assert_int_equal(g[0].mem_used_mib, 1024);
    assert_int_equal(g[0].utilization, 42);
    assert_int_equal(g[1].index, 1);
    assert_int_equal(g[1].utilization, 0);
    write_file("failing-smi", "#!/bin/sh\nexit 9\n", 0700);
    snprintf(smi, sizeof(smi), "%s/failing-smi", dir);
    assert_int_equal(gpu_query(smi, 5000, g, 4), -1);
    assert_int_equal(gpu_query("/nonexistent/nvidia-smi", 5000, g, 4), -1);
}

static void test_proc_run(void **state)
{
    char *argv_ok[] = {"sh", "-c", "echo hi; exit 4", NULL};
    char *argv_slow[] = {"sleep", "5", NULL};
    char *out = NULL;

    (void)state;
    assert_int_equal(proc_run(argv_ok, 5000, &out, 64), 4);
    assert_string_equal(out, "hi\n");
    free(out);
    assert_int_equal(proc_run(argv_slow, 200, NULL, 0), -1);
}

static void test_files(void **state)
{
    char path[128], sub[160], *text;

    (void)state;
    snprintf(path, sizeof(path), "%s/tree", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(sub, sizeof(sub), "%s/exit.json", path);
    assert_int_equal(file_write_atomic(sub, "{\"exitCode\":3}", 14), 0);
    text = file_read(sub, 4);
    assert_string_equal(text, "{\"ex"); /* capped */
    free(text);
    snprintf(sub, sizeof(sub), "%s/work", path);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(symlink("/", strcat(sub, "/root")), 0);
    assert_int_equal(file_remove_tree(path), 0);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(access("/", F_OK), 0);
    assert_null(file_read(sub, 10));
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/allot-test-agent-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return file_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_words),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_nvidia_smi),
        cmocka_unit_test(test_proc_run),
        cmocka_unit_test(test_files),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
