/*
 * partition_proxy.c: a TCP proxy for the partition tests, between an
 * agent and allotd, that can stop forwarding as a network partition does.
 *
 *   partition_proxy PORT_FILE TARGET_PORT CUT_FILE
 *
 * listens on 127.0.0.1 (a free port, written to PORT_FILE once listening)
 * and forwards every connection to 127.0.0.1:TARGET_PORT. While CUT_FILE
 * exists it forwards nothing: bytes already on their way are dropped, the
 * connections stay open and silent (as across a partition: no reset, no
 * answer, the client waits for its timeout), and new connections are
 * accepted and held the same way. When CUT_FILE goes away, every held
 * connection is closed and new ones are forwarded again. SIGTERM ends it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PAIRS 64
#define CHECK_MS 20

struct pair {
    int client, server;        /* -1: none; a held connection has no server */
};

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
    (void)sig;
    stopping = 1;
}

static int listen_on(const char *port_file)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    FILE *f;
    char tmp[1024];
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.new", port_file);
    f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 ||
        rename(tmp, port_file) != 0)
        return -1;
    return fd;
}

static int connect_to(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void close_pair(struct pair *p)
{
    if (p->client >= 0)
        close(p->client);
    if (p->server >= 0)
        close(p->server);
    p->client = p->server = -1;
}

/* Moves what one side has to the other; -1 when the pair is done. */
static int forward(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof(buf)), off = 0;

    if (n <= 0)
        return -1;
    while (off < n) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w <= 0)
            return -1;
        off += w;
    }
    return 0;
}

/* Cut: drop what arrives; the server side is closed, the client held. */
static void hold(struct pair *p)
{
    char buf[65536];

    if (p->server >= 0) {
        close(p->server);
        p->server = -1;
    }
    if (p->client >= 0 && read(p->client, buf, sizeof(buf)) == 0)
        close_pair(p); /* the client gave up */
}

static void accept_one(int lfd, struct pair *pairs, int target, int cut)
{
    int fd = accept(lfd, NULL, NULL), i;

    if (fd < 0)
        return;
    for (i = 0; i < MAX_PAIRS && pairs[i].client >= 0; i++)
        ;
    if (i == MAX_PAIRS) {
        close(fd);
        return;
    }
    pairs[i].client = fd;
    pairs[i].server = cut ? -1 : connect_to(target);
    if (!cut && pairs[i].server < 0)
        close_pair(&pairs[i]);
}

int main(int argc, char **argv)
{
    struct pair pairs[MAX_PAIRS];
    struct pollfd pf[1 + 2 * MAX_PAIRS];
    int lfd, target, i, n, was_cut = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: partition_proxy PORT_FILE TARGET_PORT CUT_FILE\n");
        return 2;
    }
    signal(SIGTERM, on_term);
    signal(SIGPIPE, SIG_IGN);
    target = atoi(argv[2]);
    lfd = listen_on(argv[1]);
    if (lfd < 0) {
        perror("partition_proxy: listen");
        return 1;
    }
    for (i = 0; i < MAX_PAIRS; i++)
        pairs[i].client = pairs[i].server = -1;
    while (!stopping) {
        int cut = access(argv[3], F_OK) == 0;
        if (was_cut && !cut)
            for (i = 0; i < MAX_PAIRS; i++)
                if (pairs[i].server < 0)
                    close_pair(&pairs[i]); /* held across the cut: closed now */
        was_cut = cut;
        pf[0].fd = lfd;
        pf[0].events = POLLIN;
        for (i = 0, n = 1; i < MAX_PAIRS; i++) {
            pf[n].fd = pairs[i].client;
            pf[n++].events = POLLIN;
            pf[n].fd = pairs[i].server;
            pf[n++].events = POLLIN;
        }
        if (poll(pf, (nfds_t)n, CHECK_MS) < 0 && errno != EINTR)
            break;
        if (pf[0].revents & POLLIN)
            accept_one(lfd, pairs, target, cut);
        for (i = 0; i < MAX_PAIRS; i++) {
            struct pollfd *c = &pf[1 + 2 * i], *s = &pf[2 + 2 * i];
            if (pairs[i].client < 0)
                continue;
            if (cut) {
                if (c->revents || s->revents)
                    hold(&pairs[i]);
                continue;
            }
            if (((c->revents & (POLLIN | POLLHUP | POLLERR)) &&
                 forward(pairs[i].client, pairs[i].server) != 0) ||
                ((s->revents & (POLLIN | POLLHUP | POLLERR)) &&
                 forward(pairs[i].server, pairs[i].client) != 0))
                close_pair(&pairs[i]);
        }
    }
    for (i = 0; i < MAX_PAIRS; i++)
        close_pair(&pairs[i]);
    close(lfd);
    return 0;
}
