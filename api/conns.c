/*
 * conns.c: the client connections allotd holds, and which of them to let
 * go when they would keep others from being served.
 *
 * Why: civetweb 1.15 serves a connection on one worker thread from accept
 * to close. A worker waits up to request_timeout_ms for a silent client's
 * request and up to keep_alive_timeout_ms on a kept-alive connection
 * between requests; once every worker is so held, every other client
 * waits in the queue. Short timeouts alone do not help against clients
 * that open a new connection as soon as one is closed. civetweb has no
 * hook between accept and the first read, and gives no way to reach a
 * connection's socket, so allotd takes the socket where it is born: it
 * defines accept(), which civetweb's listener then calls instead of the C
 * library's (ELF symbol interposition: the executable's definition comes
 * first), and records each connection in a table by descriptor.
 *
 * A connection's state:
 *   IDLE since t       accepted at t and no request head yet ("new"), or
 *                      kept alive since its last reply ended at t;
 *   RECEIVING since t  its request head arrived at t and its body is
 *                      being read (api_conns_begin);
 *   BUSY               its handler runs (api_conns_busy), until the reply
 *                      is sent (api_conns_end: IDLE since then).
 *
 * Deadlines (every TICK_MS): a connection RECEIVING for longer than the
 * body timeout has the read side of its socket shut down: civetweb's
 * mg_read() returns what came so far (it would otherwise wait as long as
 * bytes keep trickling in), and the dispatcher answers 408.
 *
 * Admission (admit(), on every accept and every TICK_MS, once more
 * connections are open than the workers less a reserve of an eighth):
 *   Step 1: forget slots whose descriptor no longer holds the peer they
 *           recorded (civetweb closed it; getpeername tells);
 *   Step 2: count the connections that wait for a worker: those open past
 *           the number of workers, or, if more, the new ones whose whole
 *           request head has waited unread for WAIT_MS;
 *   Step 3: for each, shut down one connection, in this order: one whose
 *           client has closed its side; a new one that has not sent its
 *           request head for MIN_SILENT_MS (nothing, or a trickle with no
 *           byte for that long); a kept-alive or receiving one quiet for
 *           MIN_IDLE_MS with nothing unread; the longest idle first within
 *           each. Nobody waits: nobody is let go, however many clients.
 *   shutdown() and not close(): the descriptor stays civetweb's, whose
 *   worker reads end-of-file at once and closes it.
 *
 * Invariants:
 *   1. A BUSY connection is never shut down: a request that is being
 *      answered is answered.
 *   2. Only a descriptor whose peer is still the one recorded at accept is
 *      shut down.
 *   3. Before api_conns_start (and after api_conns_stop) accept() only
 *      accepts; the table is a process global because accept() has no
 *      context argument.
 */
#include "api.h"
#include "clock.h"
#include "thread_role.h"

#include <civetweb.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/tcp.h>   /* struct tcp_info (glibc shows it only to _DEFAULT_SOURCE) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* glibc declares it only under _GNU_SOURCE, which would let pthread.h
 * find scheduler/sched.h instead of the system's. */
int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

#define MIN_IDLE_MS 20         /* a kept-alive or receiving connection, quiet */
#define MIN_SILENT_MS 100      /* a new connection that has not sent its request */
#define WAIT_MS 5
#define TICK_MS 100
#define MAX_SLOTS 65536

enum conn_state { C_FREE = 0, C_IDLE, C_RECEIVING, C_BUSY };

struct slot {
    int state;                         /* enum conn_state */
    int port;
    int64_t since_ms;
    uint32_t gen;                      /* which connection of this descriptor */
    int open_index;                    /* where it sits in open[] */
    struct sockaddr_storage peer;
    socklen_t peer_len;
    char addr[48];                     /* as civetweb writes remote_addr */
    int served;                        /* a request of it reached the dispatcher */
    int complete;                      /* a whole request head was seen unread */
    int cut;                           /* its read side was shut down */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, stopping;
    int workers;
    int limit;                         /* open connections past which idle ones go */
    int body_timeout_ms;
    int n_slots;
    struct slot *slots;                /* by descriptor */
    int *open;                         /* descriptors of the slots in use */
    int n_open;
    uint32_t next_gen;
    pthread_t tick;
} T = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static atomic_llong n_accepted, n_evicted;
static atomic_int hooked;              /* accept() went through us at least once */

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the table (callers hold T.mu) ---- */

static void slot_drop(int fd)
{
    struct slot *s = &T.slots[fd];
    int last;

    if (s->state == C_FREE)
        return;
    last = T.open[--T.n_open];
    T.open[s->open_index] = last;
    T.slots[last].open_index = s->open_index;
    s->state = C_FREE;
}

static void slot_take(int fd, const struct sockaddr *peer, socklen_t len)
{
    struct slot *s = &T.slots[fd];

    slot_drop(fd);
    memset(s, 0, sizeof(*s));
    s->state = C_IDLE;
    s->since_ms = mono_ms();
    s->gen = ++T.next_gen;
    if (len > sizeof(s->peer))
        len = sizeof(s->peer);
    memcpy(&s->peer, peer, len);
    s->peer_len = len;
    getnameinfo(peer, len, s->addr, sizeof(s->addr), NULL, 0, NI_NUMERICHOST);
    if (peer->sa_family == AF_INET)
        s->port = ntohs(((const struct sockaddr_in *)peer)->sin_port);
    else if (peer->sa_family == AF_INET6)
        s->port = ntohs(((const struct sockaddr_in6 *)peer)->sin6_port);
    s->open_index = T.n_open;
    T.open[T.n_open++] = fd;
}

/* Does fd still hold the connection recorded in its slot? */
static int slot_live(int fd)
{
    struct sockaddr_storage now;
    socklen_t len = sizeof(now);
    const struct slot *s = &T.slots[fd];

    if (getpeername(fd, (struct sockaddr *)&now, &len) != 0)
        return 0;
    return len == s->peer_len && memcmp(&now, &s->peer, len) == 0;
}

/* What the kernel knows of a connection's input. */
struct input {
    int unread;                        /* bytes wait that nobody has read */
    int eof;                           /* the client has closed its side */
    int64_t quiet_ms;                  /* since the client last sent data (or connected) */
};

/* Looks at a slot's socket; marks it `complete` once a whole request head
 * is seen waiting unread (its client is no trickler: it waits for a
 * worker, which will read the head and reach the dispatcher). */
static void look(int fd, struct slot *s, struct input *in)
{
    static char peek[16384 + 1];       /* callers hold T.mu */
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    ssize_t n;

    memset(&ti, 0, sizeof(ti));
    in->quiet_ms = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0
                       ? (int64_t)ti.tcpi_last_data_recv : 0;
    n = recv(fd, peek, s->served || s->complete ? 1 : sizeof(peek) - 1, MSG_PEEK | MSG_DONTWAIT);
    in->unread = n > 0;
    in->eof = n == 0;
    if (n > 0 && !s->served && !s->complete) {
        peek[n] = 0;
        s->complete = strstr(peek, "\r\n\r\n") != NULL;
    }
}

/* How much a slot deserves to be let go: 0 never (BUSY, just active,
 * input waiting, a whole head seen); 3 its client has gone; 2 a new
 * connection that has sent no request; 1 a kept-alive or receiving one. */
static int idleness(int fd, struct slot *s, int64_t now)
{
    struct input in;

    if (s->state == C_BUSY)
        return 0;
    look(fd, s, &in);
    if (in.eof)
        return 3;
    if (in.unread || s->complete ||
        now - s->since_ms < (s->served ? MIN_IDLE_MS : MIN_SILENT_MS) ||
        in.quiet_ms < (s->served ? MIN_IDLE_MS : MIN_SILENT_MS))
        return 0;
    return s->served ? 1 : 2;
}

/* The slot to let go first: the most idle kind, then the longest idle;
 * -1 if none may go. */
static int victim(int64_t now)
{
    int i, best = -1, best_kind = 0;

    for (i = 0; i < T.n_open; i++) {
        int fd = T.open[i];
        int kind = idleness(fd, &T.slots[fd], now);
        if (kind > best_kind ||
            (kind && kind == best_kind && T.slots[fd].since_ms < T.slots[best].since_ms)) {
            best = fd;
            best_kind = kind;
        }
    }
    return best;
}

/* New connections whose request head has been waiting, unread, for
 * WAIT_MS: they wait for a worker. */
static int waiting(int64_t now)
{
    int i, n = 0;

    for (i = 0; i < T.n_open; i++) {
        int fd = T.open[i];
        struct slot *s = &T.slots[fd];
        struct input in;
        if (s->state != C_IDLE || s->served || now - s->since_ms < WAIT_MS)
            continue;
        look(fd, s, &in);
        n += in.unread && s->complete;
    }
    return n;
}

static void evict(int fd)
{
    shutdown(fd, SHUT_RDWR);
    slot_drop(fd);
    atomic_fetch_add(&n_evicted, 1);
}

/* Cuts the bodies that are late (their read side only: the reply still goes out). */
static void cut_late_bodies(int64_t now)
{
    int i;

    for (i = 0; i < T.n_open; i++) {
        struct slot *s = &T.slots[T.open[i]];
        if (s->state == C_RECEIVING && !s->cut && now - s->since_ms > T.body_timeout_ms &&
            slot_live(T.open[i])) {
            shutdown(T.open[i], SHUT_RD);
            s->cut = 1;
        }
    }
}

static void admit(void)
{
    int64_t now = mono_ms();
    int i, fd, need;

    /* Step 1 */
    for (i = T.n_open - 1; i >= 0; i--)
        if (T.slots[T.open[i]].state != C_BUSY && !slot_live(T.open[i]))
            slot_drop(T.open[i]);
    /* Step 2 */
    need = waiting(now);
    if (need < T.n_open - T.workers)
        need = T.n_open - T.workers;
    /* Step 3 */
    for (; need > 0 && (fd = victim(now)) >= 0; need--)
        evict(fd);
}

/* ---- the accept() civetweb calls ---- */

int accept(int sockfd, struct sockaddr *addr, socklen_t *addrlen)
{
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    int fd = accept4(sockfd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);

    if (fd < 0)
        return fd;
    if (addr && addrlen) {
        memcpy(addr, &peer, len < *addrlen ? len : *addrlen);
        *addrlen = len;
    }
    atomic_store(&hooked, 1);
    atomic_fetch_add(&n_accepted, 1);
    pthread_mutex_lock(&T.mu);
    if (T.started && fd < T.n_slots) {
        slot_take(fd, (struct sockaddr *)&peer, len);
        if (T.n_open > T.limit)
            admit();
    }
    pthread_mutex_unlock(&T.mu);
    return fd;
}

/* ---- what the dispatcher reports ---- */

/* The slot of a connection: remembered in its user data after the first
 * lookup by peer address and port. civetweb reuses a connection object
 * for the next connection its worker serves, so a remembered slot of
 * another generation is looked up again. Returns the descriptor or -1. */
static int slot_of(struct mg_connection *conn)
{
    uintptr_t tag = (uintptr_t)mg_get_user_connection_data(conn);
    const struct mg_request_info *ri;
    int i, fd = (int)(tag & 0xfffff) - 1;

    if (tag && fd < T.n_slots && T.slots[fd].state != C_FREE &&
        T.slots[fd].gen == (uint32_t)(tag >> 20))
        return fd;
    ri = mg_get_request_info(conn);
    if (!ri)
        return -1;
    for (i = 0; i < T.n_open; i++) {
        struct slot *s = &T.slots[T.open[i]];
        if (s->port == ri->remote_port && strcmp(s->addr, ri->remote_addr) == 0) {
            mg_set_user_connection_data(conn, (void *)(((uintptr_t)s->gen << 20) |
                                                       (uintptr_t)(T.open[i] + 1)));
            return T.open[i];
        }
    }
    return -1;
}

static void set_state(struct mg_connection *conn, int state)
{
    int fd;

    pthread_mutex_lock(&T.mu);
    if (T.started && (fd = slot_of(conn)) >= 0) {
        T.slots[fd].state = state;
        T.slots[fd].since_ms = mono_ms();
        T.slots[fd].served = 1;
        T.slots[fd].complete = 0;
    }
    pthread_mutex_unlock(&T.mu);
}

void api_conns_begin(struct mg_connection *conn)
{
    set_state(conn, C_RECEIVING);
}

void api_conns_busy(struct mg_connection *conn)
{
    set_state(conn, C_BUSY);
}

void api_conns_end(struct mg_connection *conn)
{
    set_state(conn, C_IDLE);
}

int api_conns_init_connection(const struct mg_connection *conn, void **data)
{
    (void)conn;
    *data = NULL;
    return 0;
}

void api_conns_closed(const struct mg_connection *conn)
{
    uintptr_t tag = (uintptr_t)mg_get_user_connection_data(conn);
    int fd = (int)(tag & 0xfffff) - 1;

    if (!tag)
        return;   /* never reached a handler: Step 1 of admit() forgets it */
    pthread_mutex_lock(&T.mu);
    if (T.started && fd < T.n_slots && T.slots[fd].gen == (uint32_t)(tag >> 20))
        slot_drop(fd);
    pthread_mutex_unlock(&T.mu);
}

/* ---- the housekeeping thread ---- */

static void *tick_main(void *arg)
{
    (void)arg;
    thread_role_name("allot-conns");
    pthread_mutex_lock(&T.mu);
    while (!T.stopping) {
        struct timespec ts;
        clock_deadline(&ts, CLOCK_REALTIME, TICK_MS);
        pthread_cond_timedwait(&T.cv, &T.mu, &ts);
        if (T.stopping)
            break;
        cut_late_bodies(mono_ms());
        if (T.n_open > T.limit)
            admit();
    }
    pthread_mutex_unlock(&T.mu);
    return NULL;
}

/* Every connection is a descriptor: raise the soft limit to the hard one
 * (systemd's default soft limit is 1,024), and size the table by it. */
static int descriptors(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > MAX_SLOTS ? MAX_SLOTS : (int)rl.rlim_cur;
}

int api_conns_start(int workers, int body_timeout_ms)
{
    int n = descriptors(), rc = -1;

    pthread_mutex_lock(&T.mu);
    T.slots = calloc((size_t)n, sizeof(*T.slots));
    T.open = calloc((size_t)n, sizeof(*T.open));
    if (T.slots && T.open) {
        T.n_slots = n;
        T.n_open = 0;
        T.workers = workers;
        T.limit = workers - (workers / 8 > 1 ? workers / 8 : 1);
        if (T.limit < 1)
            T.limit = 1;
        T.stopping = 0;
        T.body_timeout_ms = body_timeout_ms;
        T.started = pthread_create(&T.tick, NULL, tick_main, NULL) == 0;
        rc = T.started ? 0 : -1;
    }
    if (rc != 0) {
        free(T.slots);
        free(T.open);
        T.slots = NULL;
        T.open = NULL;
    }
    pthread_mutex_unlock(&T.mu);
    return rc;
}

void api_conns_stop(void)
{
    pthread_mutex_lock(&T.mu);
    if (!T.started) {
        pthread_mutex_unlock(&T.mu);
        return;
    }
    T.stopping = 1;
    pthread_cond_signal(&T.cv);
    pthread_mutex_unlock(&T.mu);
    pthread_join(T.tick, NULL);
    pthread_mutex_lock(&T.mu);
    T.started = 0;
    free(T.slots);
    free(T.open);
    T.slots = NULL;
    T.open = NULL;
    T.n_slots = T.n_open = 0;
    pthread_mutex_unlock(&T.mu);
}

/* civetweb 1.15's listener polls its listening sockets for up to 2 s at a
 * time (SOCKET_TIMEOUT_QUANTUM) and reads its stop flag only between two
 * polls, so mg_stop() waited up to 2 s for it to notice. A listening
 * socket shut down reads as closed at once (the poll returns, accept()
 * fails): the listener sees the flag within microseconds. New connections
 * are refused from then on; those accepted are served to the end. The
 * listening sockets are the descriptors that accept connections
 * (SO_ACCEPTCONN): allotd listens on no others than civetweb's. */
void api_conns_unlisten(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name), on = 0;
        socklen_t len = sizeof(on);

        if (e->d_name[0] != '.' && fd != dirfd(d) &&
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on)
            shutdown(fd, SHUT_RDWR);
    }
    closedir(d);
}

void api_conns_stats(struct api_conns_stats *out)
{
    pthread_mutex_lock(&T.mu);
    out->open = T.n_open;
    pthread_mutex_unlock(&T.mu);
    out->accepted = atomic_load(&n_accepted);
    out->evicted = atomic_load(&n_evicted);
    out->hooked = atomic_load(&hooked);
}
