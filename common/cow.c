/*
 * cow.c: a function run in a forked child, on a copy-on-write image of
 * the caller's memory, its answer read back through a pipe (cow.h).
 *
 * One run (cow_run):
 *   Step 1: a pipe, then fork() (cow_start());
 *   Step 2: the child closes the read end, runs fn, which writes through
 *           cow_put() (buffered, COW_BUF bytes a write), flushes and
 *           _exit()s with 0 when fn and every write succeeded, 1 otherwise;
 *   Step 3: the caller closes the write end, reads (cow_finish()) until end of file
 *           (growing the buffer by doubling), reaps the child and keeps
 *           the bytes only when it exited 0.
 *
 * Invariants:
 *   1. The caller's memory is never written by the child (fork's copy on
 *      write); only the bytes sent come back.
 *   2. Every child is reaped before cow_run() returns, and every
 *      descriptor it opened is closed.
 */
#include "cow.h"
#include "fileio.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define COW_BUF 65536

struct cow_out {
    int fd;
    int failed;
    size_t n;
    char buf[COW_BUF];
};

static int flush_out(struct cow_out *o)
{
    if (!o->failed && o->n > 0 && fio_write(o->fd, o->buf, o->n) != 0)
        o->failed = 1;
    o->n = 0;
    return o->failed ? -1 : 0;
}

int cow_put(struct cow_out *o, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0 && !o->failed) {
        size_t room = COW_BUF - o->n, k = n < room ? n : room;
        memcpy(o->buf + o->n, c, k);
        o->n += k;
        c += k;
        n -= k;
        if (o->n == COW_BUF)
            flush_out(o);
    }
    return o->failed ? -1 : 0;
}

int cow_get(const char *buf, size_t len, size_t *at, void *p, size_t n)
{
    if (*at > len || len - *at < n)
        return -1;
    memcpy(p, buf + *at, n);
    *at += n;
    return 0;
}

/* Step 2, in the child: never returns. */
static void child(int fd, int (*fn)(void *, struct cow_out *), void *arg)
{
    static struct cow_out o;   /* the child's own copy: no stack for 64 KiB */
    int rc;

    signal(SIGPIPE, SIG_IGN);
    o.fd = fd;
    rc = fn(arg, &o);
    if (flush_out(&o) != 0)
        rc = -1;
    _exit(rc == 0 ? 0 : 1);
}

/* Step 3: everything until end of file; -1 on a read error or no memory. */
static int read_all(int fd, char **buf, size_t *len)
{
    size_t cap = COW_BUF;
    char *b = malloc(cap + 1), *nb;
    ssize_t r;

    *len = 0;
    while (b) {
        if (*len == cap) {
            nb = realloc(b, cap * 2 + 1);
            if (!nb)
                break;
            b = nb;
            cap *= 2;
        }
        r = read(fd, b + *len, cap - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (r == 0) {
            b[*len] = '\0';
            *buf = b;
            return 0;
        }
        *len += (size_t)r;
    }
    free(b);
    *len = 0;
    return -1;
}

int cow_start(int (*fn)(void *arg, struct cow_out *out), void *arg, struct cow_child *c)
{
    int fds[2];
    pid_t pid;

    c->fd = c->pid = -1;
    if (pipe(fds) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], fn, arg);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    c->fd = fds[0];
    c->pid = (int)pid;
    return 0;
}

int cow_finish(struct cow_child *c, char **buf, size_t *len)
{
    int status = 0, rc;

    *buf = NULL;
    *len = 0;
    rc = read_all(c->fd, buf, len);
    while (waitpid((pid_t)c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = -1;
    close(c->fd);
    if (rc != 0) {
        free(*buf);
        *buf = NULL;
        *len = 0;
    }
    return rc;
}

int cow_run(int (*fn)(void *arg, struct cow_out *out), void *arg, char **buf, size_t *len)
{
    struct cow_child c;

    *buf = NULL;
    *len = 0;
    return cow_start(fn, arg, &c) == 0 ? cow_finish(&c, buf, len) : -1;
}
