/*
 * test_agent.c: allot-agent's helpers: options, the token file's mode,
 * command lines split like a shell without expansion, nvidia-smi's CSV
 * (through a fake nvidia-smi), NVML (through the fake libnvidia-ml.so.1 of
 * fake_nvml.c), which pod uses which GPU, commands run with a timeout, and
 * the file operations the pod directories rely on.
 */
#define _GNU_SOURCE /* usleep */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* A device as gpu_query() read it: its uuid, model, memory (total and
 * used, MiB), utilization (%) and how many processes it lists. */
static void gpu_is(const struct gpu_info *g, const char *uuid, const char *model,
                   int64_t total_mib, int64_t used_mib, int utilization, int n_procs)
{
    assert_string_equal(g->uuid, uuid);
    assert_string_equal(g->model, model);
    assert_int_equal(g->mem_total_mib, total_mib);
    assert_int_equal(g->mem_used_mib, used_mib);
    assert_int_equal(g->utilization, utilization);
    assert_int_equal(g->n_procs, n_procs);
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
    char *bad_gpus[] = {"allot-agent", "--server", "http://u", "--token-file", "t", "--gpus", "x",
                        NULL};
    char *two[] = {"allot-agent", "--server", "http://a:1/,http://b:2", "--token-file", "t", NULL};
    char *bad_server[] = {"allot-agent", "--server", "http://a:1,ftp://b", "--token-file", "t",
                          NULL};
    char *no_server[] = {"allot-agent", "--token-file", "t", NULL};
    char *orphan[] = {"allot-agent", "--server", "http://u", "--token-file", "t",
                      "--orphan-timeout-ms", "3000", NULL};

    (void)state;
    assert_int_equal(agent_opts_parse(&o, 11, ok), 0);
    assert_string_equal(o.server, "http://h:1/"); /* as given: servers_parse() trims it */
    assert_int_equal(o.gpus, 2);
    assert_int_equal(o.heartbeat_ms, 500);
    assert_string_equal(o.runtime, "auto");
    assert_int_equal(agent_opts_parse(&o, 7, bad_gpus), -1);
    assert_int_equal(agent_opts_parse(&o, 5, two), 0); /* replicas: client.c tries them in turn */
    assert_int_equal(agent_opts_parse(&o, 5, bad_server), -1);
    assert_int_equal(agent_opts_parse(&o, 3, no_server), -1);
    /* the lease allotd grants replaced it: refused, not ignored */
    assert_int_equal(agent_opts_parse(&o, 7, orphan), -1);
}

/* lease.c: the lease moves forward only, its file is what the supervisors
 * read, and no file is a lease that has ended. */
static void test_lease(void **state)
{
    struct lease l, got;
    char path[128];

    (void)state;
    snprintf(path, sizeof(path), "%s/agent.lease", dir);
    memset(&l, 0, sizeof(l));
    assert_int_equal(lease_read(path, &got), -1);
    assert_true(lease_ended(&got, 1));
    assert_int_equal(lease_extend(path, &l, 1000, 3000, 1000), 0);
    assert_true(l.until == 4000 && l.kill_by == 4500);
    assert_int_equal(lease_read(path, &got), 0);
    assert_true(got.until == 4000 && got.kill_by == 4500);
    assert_false(lease_ended(&got, 3999));
    assert_true(lease_ended(&got, 4000));
    /* an answer to an older request never shortens it */
    assert_int_equal(lease_extend(path, &l, 500, 3000, 1000), 0);
    assert_int_equal(lease_read(path, &got), 0);
    assert_true(got.until == 4000);
    assert_int_equal(lease_extend(path, &l, 2000, 3000, 1000), 0);
    assert_int_equal(lease_read(path, &got), 0);
    assert_true(got.until == 5000 && got.kill_by == 5500);
    /* what an older agent left (an empty file) is no lease */
    write_file("agent.lease", "", 0600);
    assert_int_equal(lease_read(path, &got), -1);
    assert_true(lease_ended(&got, 1));
    write_file("agent.lease", "9000 100\n", 0600);
    assert_int_equal(lease_read(path, &got), -1);
}

static void test_token_file(void **state)
{
    char path[128], tok[64];

    (void)state;
    write_file("token", "abc.def\n", 0600);
    snprintf(path, sizeof(path), "%s/token", dir);
    assert_int_equal(agent_read_token(path, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "abc.def");
    /* token_file_group_or_world_readable_refused: any bit for the group
     * or others refuses it, group-only modes too */
    {
        static const mode_t refused[] = {0644, 0640, 0660, 0620, 0610, 0604, 0602, 0601};
        size_t i;

        for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
            chmod(path, refused[i]);
            if (agent_read_token(path, tok, sizeof(tok)) != -1)
                fail_msg("a token file of mode %04o was accepted", (unsigned)refused[i]);
        }
        chmod(path, 0400);
        assert_int_equal(agent_read_token(path, tok, sizeof(tok)), 0);
    }
    write_file("empty", "\n", 0600);
    snprintf(path, sizeof(path), "%s/empty", dir);
    assert_int_equal(agent_read_token(path, tok, sizeof(tok)), -1);
}

/* nvidia-smi's two queries: the devices, then their compute processes. */
static void test_nvidia_smi(void **state)
{
    struct gpu_info g[4];
    struct gpu_src src;
    char smi[128], why[256];

    (void)state;
    write_file("nvidia-smi",
               "#!/bin/sh\n"
               "case \"$*\" in\n"
               "*--query-gpu=*)\n"
               "  echo '0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559, 1024, 42'\n"
               "  echo '1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559, [N/A], [N/A]' ;;\n"
               "*--query-compute-apps=*)\n"
               "  echo 'GPU-bbbb, 4242, 2048'\n"
               "  echo 'GPU-bbbb, 4343, [N/A]'\n"
               "  echo 'GPU-cccc, 4444, 1'\n"
               "  echo 'GPU-aaaa, 0, 1' ;;\n"
               "esac\n",
               0700);
    snprintf(smi, sizeof(smi), "%s/nvidia-smi", dir);
    assert_int_equal(gpu_open(&src, "none", smi, why, sizeof(why)), GPU_SMI);
    assert_int_equal(gpu_query(&src, 5000, g, 4, 1), 2);
    gpu_is(&g[0], "GPU-aaaa", "NVIDIA H100 80GB HBM3", 81559, 1024, 42, 0); /* pid 0: none */
    assert_int_equal(g[1].index, 1);
    assert_int_equal(g[1].utilization, -1); /* [N/A]: unknown */
    assert_int_equal(g[1].util_per_process, 0);
    assert_int_equal(g[1].n_procs, 2); /* GPU-cccc is no device here */
    assert_int_equal(g[1].procs[0].pid, 4242);
    assert_int_equal(g[1].procs[0].mem_mib, 2048);
    assert_int_equal(g[1].procs[0].sm_util, -1);
    assert_int_equal(g[1].procs[1].mem_mib, -1);
    gpu_close(&src);
    write_file("failing-smi", "#!/bin/sh\nexit 9\n", 0700);
    snprintf(smi, sizeof(smi), "%s/failing-smi", dir);
    gpu_open(&src, "none", smi, why, sizeof(why));
    assert_int_equal(gpu_query(&src, 5000, g, 4, 1), -1);
    gpu_open(&src, "none", "/nonexistent/nvidia-smi", why, sizeof(why));
    assert_int_equal(gpu_query(&src, 5000, g, 4, 1), -1);
}

/* NVML through the fake library: devices, processes with unknown memory,
 * per-process samples (or none), figures that change between queries,
 * and the ways opening it fails. */
static void test_nvml(void **state)
{
    struct gpu_info *g = calloc(4, sizeof(*g));
    struct gpu_src src;
    char file[128], why[256];

    (void)state;
    snprintf(file, sizeof(file), "%s/nvml", dir);
    setenv("ALLOT_FAKE_NVML", file, 1);
    write_file("nvml", "gpu 0 GPU-1111 81559 1234 37 Fake GPU 80GB\n"
                       "gpu 1 GPU-2222 40960 0 0 Fake GPU 40GB\n"
                       "proc 0 4242 1000 30\n"
                       "proc 0 4343 - -\n"
                       "proc 1 4444 512 -\n"
                       "noprocutil 1\n"
                       "noutil 1\n", 0600);
    assert_int_equal(gpu_open(&src, FAKE_NVML, "/nonexistent/nvidia-smi", why, sizeof(why)),
                     GPU_NVML);
    assert_int_equal(gpu_query(&src, 5000, g, 4, 1), 2);
    gpu_is(&g[0], "GPU-1111", "Fake GPU 80GB", 81559, 1234, 37, 2);
    assert_int_equal(g[0].util_per_process, 1);
    assert_int_equal(g[0].procs[0].pid, 4242);
    assert_int_equal(g[0].procs[0].mem_mib, 1000);
    assert_int_equal(g[0].procs[0].sm_util, 30);
    assert_int_equal(g[0].procs[1].mem_mib, -1); /* NVML_VALUE_NOT_AVAILABLE */
    assert_int_equal(g[0].procs[1].sm_util, 0);  /* no sample: no kernel ran */
    assert_int_equal(g[1].util_per_process, 0);  /* NOT_SUPPORTED */
    assert_int_equal(g[1].utilization, -1);      /* NOT_SUPPORTED, as under MIG */
    assert_int_equal(g[1].procs[0].sm_util, -1);
    assert_int_equal(g[1].procs[0].mem_mib, 512);
    /* the next query reads the new figures */
    write_file("nvml", "gpu 0 GPU-1111 81559 2000 0 Fake GPU 80GB\n", 0600);
    assert_int_equal(gpu_query(&src, 5000, g, 4, 1), 1);
    assert_int_equal(g[0].utilization, 0);
    assert_int_equal(g[0].mem_used_mib, 2000);
    assert_int_equal(g[0].n_procs, 0);
    gpu_close(&src);

    /* a driver that does not start, a missing library, a library that is
     * not NVML: nvidia-smi it is, and why is said */
    write_file("nvml", "fail init\n", 0600);
    assert_int_equal(gpu_open(&src, FAKE_NVML, "nvidia-smi", why, sizeof(why)), GPU_SMI);
    assert_non_null(strstr(why, "Driver Not Loaded"));
    assert_int_equal(gpu_open(&src, "/nonexistent/libnvidia-ml.so.1", "nvidia-smi", why,
                              sizeof(why)), GPU_SMI);
    assert_true(why[0] != 0);
    assert_int_equal(gpu_open(&src, "libc.so.6", "nvidia-smi", why, sizeof(why)), GPU_SMI);
    assert_non_null(strstr(why, "lacks NVML"));
    assert_int_equal(gpu_open(&src, "none", "nvidia-smi", why, sizeof(why)), GPU_SMI);
    unsetenv("ALLOT_FAKE_NVML");
    free(g);
}

/* ---- which pod uses which GPU ---- */

/* A child running `sleep 30` with only `env` in its environment. */
static pid_t spawn_sleep(const char *env)
{
    pid_t pid = fork();

    if (pid == 0) {
        char *argv[] = {"sleep", "30", NULL};
        char *envp[] = {(char *)env, NULL};
        execve("/bin/sleep", argv, envp);
        _exit(127);
    }
    return pid;
}

/* A child shell that runs `sleep` below it; the sleep's pid in *below. */
static pid_t spawn_tree(pid_t *below)
{
    pid_t pid = fork();
    int i;

    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "sleep 30 & wait", (char *)NULL);
        _exit(127);
    }
    *below = 0;
    for (i = 0; i < 500 && *below == 0; i++) {
        char path[64];
        pid_t p;
        for (p = pid + 1; p < pid + 64 && *below == 0; p++) {
            snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p);
            if (proc_parent(p) == pid && access(path, F_OK) == 0)
                *below = p;
        }
        usleep(10000);
    }
    return pid;
}

static void set_proc(struct gpu_info *g, pid_t pid, int64_t mem, int sm)
{
    g->procs[g->n_procs].pid = pid;
    g->procs[g->n_procs].mem_mib = mem;
    g->procs[g->n_procs].sm_util = sm;
    g->n_procs++;
}

static void set_pod(struct pod *p, const char *uid, pid_t shim, uint64_t devices)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->uid, sizeof(p->uid), "%s", uid);
    snprintf(p->dir, sizeof(p->dir), "%s/pods/%s", dir, uid);
    p->state = POD_RUNNING;
    p->shim_pid = shim;
    p->devices = devices;
}

/* The report of pod i, compact. */
static char *report(struct agent *a, int i)
{
    json_t *u = usage_json(a, &a->pods.v[i]);
    char *text = json_dumps(u, JSON_COMPACT);

    json_decref(u);
    return text;
}

/* pod a0 runs below its supervisor (a shell) on device 0, and also on
 * device 3, which it was not given; pod b1 is found by its environment,
 * shares device 1 with a process of no pod (per-process samples) and
 * device 2 with pod c2 (no samples: the device's figure, here unknown). */
static void test_usage(void **state)
{
    struct agent *a = calloc(1, sizeof(*a));
    pid_t gc = 0, shim = spawn_tree(&gc), env = spawn_sleep("ALLOT_POD_UID=b1");
    char want[512], *got;
    struct pod pods[3];
    int i;

    (void)state;
    assert_non_null(a);
    assert_true(gc > 0 && env > 0);
    for (i = 0; i < 500 && proc_env_value(env, "ALLOT_POD_UID", want, sizeof(want)) != 0; i++)
        usleep(10000); /* until the child has exec'd */
    set_pod(&pods[0], "a0", shim, 1u << 0);
    set_pod(&pods[1], "b1", 0, 1u << 1 | 1u << 2);
    set_pod(&pods[2], "c2", 0, 1u << 2);
    a->pods.v = pods;
    a->pods.n = a->pods.cap = 3;
    a->n_now = 4;
    a->now[0].utilization = 40;
    a->now[0].mem_used_mib = 5000;
    set_proc(&a->now[0], gc, 3000, 35);
    a->now[1].utilization = 70;
    a->now[1].util_per_process = 1;
    set_proc(&a->now[1], env, 2000, 20);
    set_proc(&a->now[1], getpid(), 4000, 50);
    a->now[2].utilization = -1; /* unknown (MIG): left out */
    a->now[3].utilization = 10;
    set_proc(&a->now[3], gc, 100, -1);
    usage_scan(a);
    assert_int_equal(a->owner[0][0], 0);
    assert_int_equal(a->owner[1][0], 1);
    assert_int_equal(a->owner[1][1], -1);
    assert_int_equal(a->owner[3][0], 0);

    got = report(a, 0);
    snprintf(want, sizeof(want),
             "[{\"index\":0,\"memoryUsedMiB\":3000,\"pids\":[%d],\"utilization\":40},"
             "{\"index\":3,\"memoryUsedMiB\":100,\"pids\":[%d],\"utilization\":10}]",
             (int)gc, (int)gc);
    assert_string_equal(got, want);
    free(got);
    got = report(a, 1);
    snprintf(want, sizeof(want),
             "[{\"index\":1,\"memoryUsedMiB\":2000,\"pids\":[%d],\"utilization\":20},"
             "{\"index\":2,\"memoryUsedMiB\":0,\"pids\":[]}]", (int)env);
    assert_string_equal(got, want);
    free(got);
    got = report(a, 2);
    assert_string_equal(got, "[{\"index\":2,\"memoryUsedMiB\":0,\"pids\":[]}]");
    free(got);
    /* no figures (declared GPUs, a failed query): no report */
    a->n_now = -1;
    assert_null(usage_json(a, &pods[0]));

    kill(shim, SIGKILL);
    kill(gc, SIGKILL);
    kill(env, SIGKILL);
    waitpid(shim, NULL, 0);
    waitpid(env, NULL, 0);
    free(a);
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
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_nvidia_smi),
        cmocka_unit_test(test_nvml),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_proc_run),
        cmocka_unit_test(test_files),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
