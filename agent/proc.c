/*
 * proc.c: process and file helpers for the agent and its supervisors:
 * telling a live process from a recycled pid, killing what is left of a
 * pod, running a short command with a timeout, and small file operations.
 *
 * Invariant: nothing here follows a symlink when removing files, and
 * proc_kill_pod() only signals processes whose environment names the pod.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "clock.h"
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int64_t agent_now_ms(void)
{
    return clock_now_ms();
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t proc_start_time(pid_t pid)
{
    char path[64], *text, *p;
    unsigned long long start = 0;
    int field;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    text = file_read(path, 4096);
    if (!text)
        return 0;
    p = strrchr(text, ')'); /* the command name may hold spaces and parentheses */
    for (field = 2; p && *p && field < 22; p++)
        if (*p == ' ')
            field++;
    if (p && field == 22)
        start = strtoull(p, NULL, 10);
    free(text);
    return start;
}

int proc_alive(pid_t pid, uint64_t start_time)
{
    if (pid <= 0 || kill(pid, 0) != 0)
        return 0;
    return start_time == 0 || proc_start_time(pid) == start_time;
}

/* Reads the environment of pid (a string of NUL-terminated entries) into
 * buf; its length, 0 if unreadable. */
static size_t env_read(const char *pid, char *buf, size_t cap)
{
    char path[64];
    size_t n = 0;
    ssize_t k;
    int fd;

    snprintf(path, sizeof(path), "/proc/%s/environ", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    while (n < cap && (k = read(fd, buf + n, cap - n)) > 0)
        n += (size_t)k;
    close(fd);
    return n;
}

/* The entry of env (n bytes) that starts with `prefix`, or NULL. */
static const char *env_find(const char *env, size_t n, const char *prefix)
{
    size_t w = strlen(prefix), i = 0;

    while (i < n) {
        size_t len = strnlen(env + i, n - i);
        if (len >= w && i + len < n && memcmp(env + i, prefix, w) == 0)
            return env + i;
        i += len + 1;
    }
    return NULL;
}

/* Does the environment of pid hold `want` as a whole entry? */
static int env_has(const char *pid, const char *want)
{
    char buf[65536];
    size_t n = env_read(pid, buf, sizeof(buf));
    const char *e = env_find(buf, n, want);

    return e && strcmp(e, want) == 0;
}

int proc_env_value(pid_t pid, const char *name, char *out, size_t len)
{
    char buf[65536], prefix[128], id[32];
    size_t n;
    const char *e;

    snprintf(id, sizeof(id), "%d", (int)pid);
    snprintf(prefix, sizeof(prefix), "%s=", name);
    n = env_read(id, buf, sizeof(buf));
    e = env_find(buf, n, prefix);
    if (!e || strlen(e + strlen(prefix)) >= len)
        return -1;
    memcpy(out, e + strlen(prefix), strlen(e + strlen(prefix)) + 1);
    return 0;
}

pid_t proc_parent(pid_t pid)
{
    char path[64], *text, *p;
    int ppid = 0;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    text = file_read(path, 4096);
    if (!text)
        return 0;
    p = strrchr(text, ')'); /* then " S ppid ..." */
    if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
        ppid = 0;
    free(text);
    return (pid_t)ppid;
}

int proc_kill_pod(const char *uid)
{
    char want[AGENT_UID_LEN + 32];
    struct dirent *e;
    DIR *d = opendir("/proc");
    int n = 0;

    if (!d)
        return 0;
    snprintf(want, sizeof(want), "ALLOT_POD_UID=%s", uid);
    while ((e = readdir(d)) != NULL) {
        pid_t pid;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pid = (pid_t)atoi(e->d_name);
        if (pid == getpid() || !env_has(e->d_name, want))
            continue;
        if (kill(pid, SIGKILL) == 0)
            n++;
    }
    closedir(d);
    return n;
}

void proc_close_from_3(void)
{
    long max = sysconf(_SC_OPEN_MAX);
    int fd;

    if (max < 0 || max > 65536)
        max = 65536;
    for (fd = 3; fd < max; fd++)
        close(fd);
}

void proc_signal_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGCHLD);
}

void proc_block_signals(sigset_t *set)
{
    proc_signal_set(set);
    sigprocmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

void proc_reset_signals(void)
{
    sigset_t none;
    int s;

    for (s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Reads what a child writes until it closes the pipe or the deadline. */
static void collect(int fd, int64_t deadline, char *buf, size_t cap, size_t *got)
{
    struct pollfd p = {fd, POLLIN, 0};
    char sink[4096];

    for (;;) {
        int64_t left = deadline - mono_ms();
        ssize_t k;
        if (left <= 0 || poll(&p, 1, (int)(left > 200 ? 200 : left)) < 0) {
            if (left <= 0 || errno != EINTR)
                return;
            continue;
        }
        if (!(p.revents & (POLLIN | POLLHUP)))
            continue;
        if (buf && *got < cap)
            k = read(fd, buf + *got, cap - *got);
        else
            k = read(fd, sink, sizeof(sink));
        if (k <= 0)
            return;
        if (buf && *got < cap)
            *got += (size_t)k;
    }
}

/* Waits for pid until the deadline, then kills it; its status or -1. */
static int wait_until(pid_t pid, int64_t deadline)
{
    int st;

    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (w < 0 && errno != EINTR)
            return -1;
        if (mono_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(10000);
    }
}

int proc_run(char *const argv[], int timeout_ms, char **out, size_t cap)
{
    int64_t deadline = mono_ms() + timeout_ms;
    char *buf = out ? malloc(cap + 1) : NULL;
    size_t got = 0;
    int fds[2], rc;
    pid_t pid;

    if (out)
        *out = NULL;
    if ((out && !buf) || pipe2(fds, O_CLOEXEC) != 0) {
        free(buf);
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(fds[1], 1);
        dup2(null, 2);
        proc_close_from_3();
        proc_reset_signals();
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    if (pid > 0)
        collect(fds[0], deadline, buf, cap, &got);
    close(fds[0]);
    rc = pid > 0 ? wait_until(pid, deadline) : -1;
    if (buf && rc >= 0) {
        buf[got] = 0;
        *out = buf;
        buf = NULL;
    }
    free(buf);
    return rc;
}

int file_write_atomic(const char *path, const char *data, size_t len)
{
    char tmp[AGENT_PATH_MAX + 8];
    int fd, rc = -1;

    snprintf(tmp, sizeof(tmp), "%s.new", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (fio_write(fd, data, len) == 0 && fsync(fd) == 0)
        rc = 0;
    close(fd);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

char *file_read(const char *path, size_t cap)
{
    char *buf = malloc(cap + 1);
    int fd;

    if (!buf)
        return NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(buf);
        return NULL;
    }
    buf[fio_read(fd, buf, cap, -1)] = 0;
    close(fd);
    return buf;
}

int file_remove_tree(const char *path)
{
    struct stat sb;
    struct dirent *e;
    DIR *d;
    int rc = 0;

    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode))
        return unlink(path);
    d = opendir(path);
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char child[AGENT_PATH_MAX];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >= (int)sizeof(child)) {
            rc = -1;
            continue;
        }
        if (file_remove_tree(child) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(path) != 0)
        rc = -1;
    return rc;
}

int find_program(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";

    if (strchr(name, '/'))
        return access(name, X_OK) == 0 && snprintf(out, len, "%s", name) < (int)len ? 0 : -1;
    while (*p) {
        size_t n = strcspn(p, ":");
        if (n > 0 && (int)n < 900 &&
            snprintf(out, len, "%.*s/%s", (int)n, p, name) < (int)len && access(out, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}
