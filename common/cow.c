/*
 * cow.c: a function run in a forked child, on a copy-on-write image of
 * the caller's memory, its answer read back through a pipe (cow.h).
 *
 * One run (cow_run):
 *   Step 1: a pipe, then fork() (cow_start());
 *   Step 2: the child closes the read end, runs fn, which writes through
 *           cow_put() (buffered, COW_BUF bytes a write); when fn and every
 *           write succeeded it adds the trailer (COW_MAGIC and the count
 *           of bytes before it), then closes the pipe and _exit()s;
 *   Step 3: the caller closes the write end, reads (cow_finish()) until
 *           end of file (growing the buffer by doubling) and keeps the
 *           bytes only when the trailer is there and counts them; a child
 *           that has not closed the pipe within the child's wait_ms
 *           (COW_WAIT_MS unless the caller set another) is killed, and
 *           the run fails. The end of file comes when the child closes
 *           the pipe, before its exit tears its address space down (about
 *           as long as the fork took: both walk the page tables); a child
 *           not yet gone then is reaped by a later cow_start() or
 *           cow_finish(), so the answer does not wait for that.
 *
 * Invariants:
 *   1. The caller's memory is never written by the child (fork's copy on
 *      write); only the bytes sent come back.
 *   2. Every child is reaped (by cow_finish(), or by a later call when its
 *      answer came before its exit), and no thread is started, and
 *      every descriptor it opened is closed.
 */
#include "cow.h"
#include "fileio.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

#define COW_BUF 65536
static void reap_done(void);

#define COW_MAGIC 0x636f772d656e6421ull   /* "cow-end!" */

struct cow_out {
    int fd;
    int failed;
    size_t n;
    uint64_t total;          /* bytes put so far */
    char buf[COW_BUF];
};

struct cow_trailer {
    uint64_t magic, total;
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

    o->total += n;
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

    struct cow_trailer t;

    signal(SIGPIPE, SIG_IGN);
    o.fd = fd;
    rc = fn(arg, &o);
    if (rc == 0) {
        t.magic = COW_MAGIC;
        t.total = o.total;
        rc = cow_put(&o, &t, sizeof(t));
    }
    if (flush_out(&o) != 0)
        rc = -1;
    close(fd);   /* the caller's end of file, before this exit's teardown */
    _exit(rc == 0 ? 0 : 1);
}

/* Step 3: everything until end of file; -1 on a read error or no memory. */
static int read_all(int fd, int wait_ms, char **buf, size_t *len)
{
    int64_t deadline = clock_mono_us() + (int64_t)wait_ms * 1000;
    size_t cap = COW_BUF;
    char *b = malloc(cap + 1), *nb;
    struct pollfd p = {fd, POLLIN, 0};
    int64_t left;
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
        left = deadline - clock_mono_us();
        if (left <= 0)
            break;
        r = poll(&p, 1, (int)((left + 999) / 1000));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;   /* an error, or the deadline */
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
    reap_done();
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
    c->wait_ms = COW_WAIT_MS;
    return 0;
}

/* Step 3: the trailer, taken off; 0 when the answer is whole. */
static int whole(char *buf, size_t *len)
{
    struct cow_trailer t;

    if (*len < sizeof(t))
        return -1;
    memcpy(&t, buf + *len - sizeof(t), sizeof(t));
    if (t.magic != COW_MAGIC || t.total != *len - sizeof(t))
        return -1;
    *len -= sizeof(t);
    buf[*len] = '\0';
    return 0;
}

static void reap(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Children whose answer was read while they still tore their memory
 * down: reaped without waiting at the next cow_start() or cow_finish(),
 * or waited for when the list is full. No thread reaps them: a thread
 * that starts or ends while another forks can leave a lock of the C
 * library or of a sanitizer's runtime held in the child, which then
 * hangs (invariant 2). */
#define COW_ZOMBIES 16
static pthread_mutex_t zombies_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t zombies[COW_ZOMBIES];
static int n_zombies;

static void reap_done(void)
{
    int i = 0;

    pthread_mutex_lock(&zombies_mu);
    while (i < n_zombies)
        if (waitpid(zombies[i], NULL, WNOHANG) != 0)   /* reaped, or not ours */
            zombies[i] = zombies[--n_zombies];
        else
            i++;
    pthread_mutex_unlock(&zombies_mu);
}

static void reap_later(pid_t pid)
{
    int kept = 0;

    if (waitpid(pid, NULL, WNOHANG) != 0)
        return;   /* reaped, or not ours to wait for */
    pthread_mutex_lock(&zombies_mu);
    if (n_zombies < COW_ZOMBIES) {
        zombies[n_zombies++] = pid;
        kept = 1;
    }
    pthread_mutex_unlock(&zombies_mu);
    if (!kept)
        reap(pid);
}

int cow_finish(struct cow_child *c, char **buf, size_t *len)
{
    int rc;

    *buf = NULL;
    *len = 0;
    rc = read_all(c->fd, c->wait_ms, buf, len);
    close(c->fd);
    reap_done();
    if (rc != 0)
        kill((pid_t)c->pid, SIGKILL);   /* past its time, or a broken pipe: reaped below */
    if (rc == 0)
        rc = whole(*buf, len);
    if (rc == 0)
        reap_later((pid_t)c->pid);
    else
        reap((pid_t)c->pid);
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
