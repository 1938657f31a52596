/*
 * mpi_exec.c: how an MPI launcher starts its daemons in its worker pods
 * with no ssh. A worker pod of an MPI workload runs `allot-agent
 * --mpi-serve` in place of the workload's command: an exec endpoint on the
 * pod's rendezvous port. The launcher's mpirun reaches it through
 * `allot-agent --mpi-rsh HOST COMMAND...`, the remote shell that
 * OMPI_MCA_plm_rsh_agent names (Open MPI calls it as `AGENT HOST COMMAND`,
 * as it would ssh). Both read the pod's mpi.json (ALLOT_MPI_EXEC, mode
 * 0600, written by the agent from what allotd handed out over the agent's
 * authenticated channel): the workload's key, and the port to listen on
 * (a worker) or the workers by host name (the launcher).
 *
 * The exchange, one command per TCP connection:
 *   server: "ALLOT-MPI-EXEC 1 NONCE\n"     NONCE: 32 random bytes, hex
 *   client: "MAC LENGTH\nCOMMAND"          MAC: HMAC-SHA256(key, NONCE "\n"
 *                                          COMMAND), hex; LENGTH: COMMAND's
 *   server: a wrong MAC: "ALLOT-MPI-EXEC denied\n", then closes, nothing
 *           run; else `sh -c COMMAND` in the pod's environment and working
 *           directory, stdin /dev/null, and frames: 'O' LEN(4) BYTES (its
 *           stdout and stderr), then 'X' CODE(4) (its exit status, 128+N
 *           for signal N), the last; lengths and codes big-endian.
 *
 * Invariants:
 *   1. Nothing runs without a MAC made with the workload's key over this
 *      connection's nonce: a recorded request does not replay.
 *   2. A connection that has not authenticated within AUTH_S seconds is
 *      closed; at most MAX_CONNS connections are served at once.
 *   3. The client retries its connection for CONNECT_S seconds: a worker's
 *      agent may start its endpoint after the launcher starts.
 *   4. The client waits AUTH_S seconds at most for the greeting: whatever
 *      else holds the port (another program on the node) is reported as
 *      not an endpoint, not waited on for ever.
 */
#define _GNU_SOURCE
#include "agent.h"
#include "fileio.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define GREETING "ALLOT-MPI-EXEC 1 "
#define DENIED "ALLOT-MPI-EXEC denied\n"
#define MAX_COMMAND 65536
#define MAX_CONNS 32
#define AUTH_S 10
#define CONNECT_S 60
#define DRAIN_MS 200

/* ---- both sides ---- */

struct mpi_conf {
    json_t *root;
    const char *key;              /* hex text: the HMAC key as it is */
};

static int conf_load(struct mpi_conf *c, const char *who)
{
    const char *path = getenv("ALLOT_MPI_EXEC");

    c->root = path && path[0] ? json_load_file(path, 0, NULL) : NULL;
    c->key = json_string_value(json_object_get(c->root, "key"));
    if (!c->key || strlen(c->key) < 32) {
        fprintf(stderr, "allot-agent %s: no MPI exec key (ALLOT_MPI_EXEC names no readable"
                " mpi.json): run it in a pod of an MPI workload\n", who);
        return -1;
    }
    return 0;
}

/* HMAC-SHA256(key, nonce "\n" cmd) in hex; "" if it cannot be made. */
static void mac_hex(const char *key, const char *nonce, const char *cmd, size_t len,
                    char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;
    size_t nl = strlen(nonce);
    char *msg = malloc(nl + 1 + len);

    out[0] = '\0';
    if (!msg)
        return;
    memcpy(msg, nonce, nl);
    msg[nl] = '\n';
    memcpy(msg + nl + 1, cmd, len);
    if (!HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)msg, nl + 1 + len, md, &n))
        n = 0;
    free(msg);
    for (i = 0; i < n && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int write_all(int fd, const void *buf, size_t len)
{
    return fio_write(fd, buf, len);
}

/* Exactly len bytes from fd; -1 if it ends sooner. */
static int read_all(int fd, void *buf, size_t len)
{
    return fio_read(fd, buf, len, -1) == len ? 0 : -1;
}

/* A line of at most cap - 1 bytes, without its '\n'; -1 if longer or cut. */
static int read_line(int fd, char *out, size_t cap)
{
    size_t n = 0;
    char ch;

    while (n + 1 < cap) {
        if (read_all(fd, &ch, 1) != 0)
            return -1;
        if (ch == '\n') {
            out[n] = '\0';
            return 0;
        }
        out[n++] = ch;
    }
    return -1;
}

/* A frame: type, then a big-endian number (the length of data that
 * follows; with no data, the number is the value: an exit status). */
static int frame(int fd, char type, const void *data, uint32_t n)
{
    unsigned char head[5] = {(unsigned char)type, (unsigned char)(n >> 24),
                             (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                             (unsigned char)n};

    return write_all(fd, head, sizeof(head)) || (data && n && write_all(fd, data, n)) ? -1 : 0;
}

/* ---- the endpoint (a worker pod) ---- */

/* Reads and checks a request; the command (malloc'd) or NULL, denied. */
static char *authenticate(int fd, const char *key)
{
    unsigned char raw[32];
    char nonce[65], line[160], want[65], got[65], greeting[100], *cmd = NULL;
    unsigned long len = 0;
    int i;

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return NULL;
    for (i = 0; i < 32; i++)
        snprintf(nonce + 2 * i, 3, "%02x", raw[i]);
    snprintf(greeting, sizeof(greeting), GREETING "%s\n", nonce);
    if (write_all(fd, greeting, strlen(greeting)) != 0 || read_line(fd, line, sizeof(line)) ||
        sscanf(line, "%64s %lu", got, &len) != 2 || strlen(got) != 64 || len > MAX_COMMAND ||
        !(cmd = malloc(len + 1)) || read_all(fd, cmd, len) != 0)
        goto denied;
    cmd[len] = '\0';
    mac_hex(key, nonce, cmd, len, want);
    if (strlen(want) == 64 && strlen(cmd) == len && CRYPTO_memcmp(want, got, 64) == 0)
        return cmd;
denied:
    free(cmd);
    (void)!write(fd, DENIED, sizeof(DENIED) - 1);
    return NULL;
}

/* Runs cmd, relaying its output to fd as frames; the exit frame last. */
static void run_command(int fd, const char *cmd)
{
    char buf[8192];
    int pipefd[2], status = 0, exited = 0, code;
    int64_t drain_until = 0;
    pid_t pid;

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return;
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    /* until it exited and its output is drained (a daemon it left may hold
     * the pipe: what it writes after DRAIN_MS is not waited for) */
    while (pid > 0 && (!exited || agent_now_ms() < drain_until)) {
        struct pollfd p = {pipefd[0], POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            ssize_t k = read(pipefd[0], buf, sizeof(buf));
            if (k > 0 && frame(fd, 'O', buf, (uint32_t)k) != 0)
                break;
            if (k == 0 && exited)
                break;
        }
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = 1;
            drain_until = agent_now_ms() + DRAIN_MS;
        }
    }
    if (!exited && pid > 0)
        waitpid(pid, &status, 0);
    code = pid < 0 ? 127 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    close(pipefd[0]);
    frame(fd, 'X', NULL, (uint32_t)code);
}

/* One connection, in a child of the endpoint (invariants 1 and 2). */
static void serve_one(int fd, const char *key)
{
    char *cmd;

    alarm(AUTH_S);
    cmd = authenticate(fd, key);
    alarm(0);
    if (cmd) {
        fprintf(stderr, "allot-agent --mpi-serve: running a command of the launcher\n");
        run_command(fd, cmd);
    } else {
        fprintf(stderr, "allot-agent --mpi-serve: a connection was denied (no valid key)\n");
    }
    free(cmd);
    close(fd);
}

static int listen_on(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 16) != 0) {
        fprintf(stderr, "allot-agent --mpi-serve: cannot listen on port %d: %s\n", port,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int mpi_serve_main(void)
{
    struct mpi_conf c;
    json_t *port = NULL;
    int fd = -1, live = 0, rc = 1;

    if (conf_load(&c, "--mpi-serve") != 0)
        goto out;
    port = json_object_get(c.root, "port");
    if (!json_is_integer(port) || (fd = listen_on((int)json_integer_value(port))) < 0)
        goto out;
    fprintf(stderr, "allot-agent --mpi-serve: the MPI launcher's endpoint listens on port %d\n",
            (int)json_integer_value(port));
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int conn;
        pid_t pid;

        while (waitpid(-1, NULL, WNOHANG) > 0)
            live--;
        if (poll(&p, 1, 200) <= 0)
            continue;
        conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
            continue;
        if (live >= MAX_CONNS) {
            close(conn);
            continue;
        }
        pid = fork();
        if (pid == 0) {
            close(fd);
            serve_one(conn, c.key);
            _exit(0);
        }
        if (pid > 0)
            live++;
        close(conn);
    }
out:
    json_decref(c.root);
    return rc;
}

/* ---- the remote shell (the launcher) ---- */

/* The worker named host: its address and port; -1 when none is. */
static int worker_of(const struct mpi_conf *c, const char *host, const char **addr, int *port)
{
    json_t *w;
    size_t i;

    json_array_foreach(json_object_get(c->root, "workers"), i, w) {
        const char *name = json_string_value(json_object_get(w, "host"));
        if (name && strcmp(name, host) == 0) {
            *addr = json_string_value(json_object_get(w, "address"));
            *port = (int)json_integer_value(json_object_get(w, "port"));
            return *addr ? 0 : -1;
        }
    }
    return -1;
}

static int connect_once(const char *addr, int port)
{
    struct addrinfo hints, *res = NULL, *ai;
    char service[16];
    int fd = -1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(addr, service, &hints, &res) != 0)
        return -1;
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* Invariant 3: retried until CONNECT_S seconds have passed. */
static int connect_retrying(const char *addr, int port)
{
    int64_t until = agent_now_ms() + CONNECT_S * 1000;
    int fd;

    while ((fd = connect_once(addr, port)) < 0 && agent_now_ms() < until)
        usleep(200000);
    return fd;
}

/* The command words joined by spaces, as ssh sends them to a shell. */
static char *join_words(int argc, char **argv)
{
    size_t len = 1;
    char *out;
    int i;

    for (i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    out = calloc(1, len);
    for (i = 0; out && i < argc; i++) {
        if (i)
            strcat(out, " ");
        strcat(out, argv[i]);
    }
    return out;
}

/* A receive timeout of s seconds on fd (0: none). */
static int recv_timeout(int fd, int s)
{
    struct timeval tv = {s, 0};

    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Sends cmd on fd and relays the answer; the remote exit status, or 255. */
static int request(int fd, const char *key, const char *cmd, const char *host)
{
    char line[160], mac[65], head[96];
    unsigned char h[5];
    char buf[8192];

    if (recv_timeout(fd, AUTH_S) != 0 || read_line(fd, line, sizeof(line)) != 0 ||
        strncmp(line, GREETING, sizeof(GREETING) - 1) != 0 || recv_timeout(fd, 0) != 0)
        return fprintf(stderr, "allot-agent --mpi-rsh: %s is not an MPI exec endpoint (no allot"
                       " greeting within %d s)\n", host, AUTH_S),
               255;
    mac_hex(key, line + sizeof(GREETING) - 1, cmd, strlen(cmd), mac);
    snprintf(head, sizeof(head), "%s %zu\n", mac, strlen(cmd));
    if (write_all(fd, head, strlen(head)) != 0 || write_all(fd, cmd, strlen(cmd)) != 0)
        return fprintf(stderr, "allot-agent --mpi-rsh: %s closed the connection\n", host), 255;
    for (;;) {
        uint32_t len;
        if (read_all(fd, h, 5) != 0)
            return fprintf(stderr, "allot-agent --mpi-rsh: %s closed the connection\n", host),
                   255;
        if (memcmp(h, DENIED, 5) == 0)
            return fprintf(stderr, "allot-agent --mpi-rsh: %s denied the command: not this"
                           " workload's key\n", host),
                   255;
        len = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
        if (h[0] == 'X')
            return (int)len & 0xff;
        if (h[0] != 'O')
            return fprintf(stderr, "allot-agent --mpi-rsh: %s sent a bad frame\n", host), 255;
        while (len > 0) {
            size_t k = len < sizeof(buf) ? len : sizeof(buf);
            if (read_all(fd, buf, k) != 0 || write_all(1, buf, k) != 0)
                return 255;
            len -= (uint32_t)k;
        }
    }
}

int mpi_rsh_main(int argc, char **argv)
{
    struct mpi_conf c = {NULL, NULL};
    const char *addr = NULL;
    char *cmd = NULL;
    int i = 2, port = 0, fd = -1, rc = 255;

    while (i < argc && argv[i][0] == '-') /* ssh's options: none apply */
        i++;
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: allot-agent --mpi-rsh HOST COMMAND...\n");
        return 255;
    }
    if (conf_load(&c, "--mpi-rsh") != 0)
        goto out;
    if (worker_of(&c, argv[i], &addr, &port) != 0) {
        fprintf(stderr, "allot-agent --mpi-rsh: %s is not a worker of this MPI workload\n",
                argv[i]);
        goto out;
    }
    cmd = join_words(argc - i - 1, argv + i + 1);
    fd = connect_retrying(addr, port);
    if (!cmd || fd < 0) {
        fprintf(stderr, "allot-agent --mpi-rsh: cannot reach %s at %s:%d within %d s\n", argv[i],
                addr, port, CONNECT_S);
        goto out;
    }
    rc = request(fd, c.key, cmd, argv[i]);
out:
    if (fd >= 0)
        close(fd);
    free(cmd);
    json_decref(c.root);
    return rc;
}
