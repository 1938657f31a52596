/*
 * h_logs.c: pod logs. The store agents append to: one file per pod run,
 * <database>-logs/<workload seq>/<uid>.log, capped at LOG_RUN_MAX bytes
 * (removed with its workload when the workload is purged);
 * and
 * GET /api/v1/workloads/{id}/logs?pod=&tailLines=&limitBytes=&follow=:
 * the runs of one pod, oldest first, as plain text.
 *
 * Invariants:
 *   1. Appends are idempotent: the byte at offset k of a run's log is
 *      written once; bytes past the cap are accepted and dropped.
 *   2. Reading needs the workload-read right on the workload's project; a
 *      workload the caller cannot read is a 404.
 *   3. A follow holds an HTTP worker: at most MAX_FOLLOWERS at once (the
 *      others get the text without following), and each ends with its
 *      client, when its workload has ended and its runs are read, after
 *      FOLLOW_MAX_S, or when the server stops.
 */
#include "agent_int.h"
#include "db_agent.h"
#include "fileio.h"

#include <civetweb.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_RUN_MAX (64LL * 1024 * 1024)
#define LIMIT_DEFAULT (4LL * 1024 * 1024)
#define LIMIT_MAX (16LL * 1024 * 1024)
#define MAX_FOLLOWERS 4
#define FOLLOW_MAX_S 3600
#define FOLLOW_POLL_MS 250
#define FOLLOW_READ_MAX (256 * 1024)

static atomic_int followers;
static atomic_int stopping;

/* ---- the store ---- */

static void run_dir(const struct api_app *app, int64_t wl_seq, char *out, size_t len)
{
    snprintf(out, len, "%.480s-logs/%lld", app->cfg.files_stem, (long long)wl_seq);
}

static void run_path(const struct api_app *app, int64_t wl_seq, const char *uid, char *out,
                     size_t len)
{
    snprintf(out, len, "%.480s-logs/%lld/%.40s.log", app->cfg.files_stem, (long long)wl_seq, uid);
}

void api_logs_drop(const char *db_path, const int64_t *seqs, int n)
{
    char dir[600], path[700];
    struct dirent *e;
    DIR *d;
    int i;

    for (i = 0; i < n; i++) {
        snprintf(dir, sizeof(dir), "%.480s-logs/%lld", db_path, (long long)seqs[i]);
        d = opendir(dir);
        if (!d)
            continue;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%.64s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
        rmdir(dir);
    }
}

static int make_dirs(const struct api_app *app, int64_t wl_seq)
{
    char dir[600];

    snprintf(dir, sizeof(dir), "%.480s-logs", app->cfg.files_stem);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    run_dir(app, wl_seq, dir, sizeof(dir));
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int api_log_append(const struct api_app *app, int64_t wl_seq, const char *uid, int64_t offset,
                   const char *data, size_t len, int64_t *size)
{
    char path[640];
    struct stat sb;
    int64_t skip, room;
    int fd, rc = -1;

    if (make_dirs(app, wl_seq) != 0)
        return -1;
    run_path(app, wl_seq, uid, path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0)
        goto out;
    *size = sb.st_size;
    rc = 0;
    if (sb.st_size >= LOG_RUN_MAX) {
        *size = offset + (int64_t)len; /* invariant 1: past the cap */
        goto out;
    }
    if (offset > sb.st_size) {
        rc = 1;
        goto out;
    }
    skip = sb.st_size - offset;
    if (skip >= (int64_t)len)
        goto out;
    room = LOG_RUN_MAX - sb.st_size;
    if (fio_write(fd, data + skip, (size_t)((int64_t)len - skip < room ? (int64_t)len - skip
                                                                         : room)) != 0) {
        rc = -1;
        goto out;
    }
    *size = offset + (int64_t)len;
out:
    close(fd);
    return rc;
}

static int64_t file_size(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* Reads [from, from + n) of a file into out; returns the bytes read. */
static size_t read_at(const char *path, int64_t from, char *out, size_t n)
{
    size_t got;
    int fd = open(path, O_RDONLY);

    if (fd < 0)
        return 0;
    got = fio_read(fd, out, n, from);
    close(fd);
    return got;
}

/* ---- the request ---- */

struct logq {
    int pod;
    int64_t tail_lines;   /* < 0: all */
    int64_t limit;
    int follow;
};

static int logq_in(struct api_req *r, const struct db_workload *w, struct logq *q)
{
    int64_t pod = 0;
    char follow[8] = "";

    q->tail_lines = -1;
    q->limit = LIMIT_DEFAULT;
    if (api_query_int(r, "pod", 0, w->n_pods - 1, &pod) ||
        api_query_int(r, "tailLines", -1, 1000000, &q->tail_lines) ||
        api_query_int(r, "limitBytes", 1, LIMIT_MAX, &q->limit))
        return -1;
    if (api_query(r, "follow", follow, sizeof(follow)) != 1 && strcmp(follow, "true") &&
        strcmp(follow, "false") && strcmp(follow, "1") && strcmp(follow, "0")) {
        api_error(r, 400, "Bad request", "follow is true or false");
        return -1;
    }
    q->pod = (int)pod;
    q->follow = strcmp(follow, "true") == 0 || strcmp(follow, "1") == 0;
    return 0;
}

/* The workload of the path, if the caller may read it (invariant 2). */
static int load_readable(struct api_req *r, struct db_workload *w)
{
    int rc = db_workload_get(r->app->db, r->params[0], w);

    if (rc == DB_OK && !api_can(&r->who, API_WL_READ, w->project_id, w->department_id))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such workload");
        return -1;
    }
    return 0;
}

/* Where the last n lines of buf[0..len) start (n < 0: all). A final
 * newline ends the last line rather than starting an empty one. */
static size_t tail_start(const char *buf, size_t len, int64_t n)
{
    size_t i = len;

    if (n < 0)
        return 0;
    if (n == 0)
        return len;
    if (i > 0 && buf[i - 1] == '\n')
        i--;
    for (; i > 0; i--)
        if (buf[i - 1] == '\n' && --n == 0)
            return i;
    return 0;
}

/* The last q->limit bytes of the runs' logs, then the last tail_lines
 * lines of those; *sent gets each run's size as read. malloc'd. */
static char *read_tail(const struct api_app *app, const struct db_pod_run *runs, int n,
                       const struct logq *q, int64_t *sent, size_t *out_len)
{
    char path[640], *buf;
    int64_t total = 0, skip, pos = 0;
    size_t used = 0, start;
    int i;

    for (i = 0; i < n; i++) {
        run_path(app, runs[i].workload_seq, runs[i].uid, path, sizeof(path));
        sent[i] = file_size(path);
        total += sent[i];
    }
    skip = total > q->limit ? total - q->limit : 0;
    buf = malloc((size_t)(total - skip) + 1);
    if (!buf)
        return NULL;
    for (i = 0; i < n; i++) {
        int64_t from = skip > pos ? skip - pos : 0;
        run_path(app, runs[i].workload_seq, runs[i].uid, path, sizeof(path));
        if (from < sent[i])
            used += read_at(path, from, buf + used, (size_t)(sent[i] - from));
        pos += sent[i];
    }
    start = tail_start(buf, used, q->tail_lines);
    memmove(buf, buf + start, used - start);
    *out_len = used - start;
    buf[*out_len] = 0;
    return buf;
}

/* ---- follow ---- */

struct follow {
    struct api_req *r;
    struct db_workload *w;
    int pod;
    char (*uids)[DB_ID_LEN];     /* runs seen, with the bytes sent of each */
    int64_t *sent;
    int n, cap;
};

static int64_t *sent_of(struct follow *f, const char *uid)
{
    int i;

    for (i = 0; i < f->n; i++)
        if (strcmp(f->uids[i], uid) == 0)
            return &f->sent[i];
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 8;
        void *u = realloc(f->uids, sizeof(*f->uids) * (size_t)cap);
        void *s = u ? realloc(f->sent, sizeof(*f->sent) * (size_t)cap) : NULL;
        if (u)
            f->uids = u;
        if (!s)
            return NULL;
        f->sent = s;
        f->cap = cap;
    }
    snprintf(f->uids[f->n], DB_ID_LEN, "%s", uid);
    f->sent[f->n] = 0;
    return &f->sent[f->n++];
}

/* Sends what the runs gained since the last pass; -1 when the client is
 * gone; *news says whether anything was sent. */
static int follow_pass(struct follow *f, int *news)
{
    struct db_pod_run *runs = NULL;
    char path[640], *buf = malloc(FOLLOW_READ_MAX);
    int n = 0, i, rc = 0;

    *news = 0;
    if (!buf || db_pod_run_list(f->r->app->db, f->w->seq, f->pod, &runs, &n) != DB_OK)
        goto out;
    for (i = 0; rc == 0 && i < n; i++) {
        int64_t *sent = sent_of(f, runs[i].uid), size;
        size_t got;
        run_path(f->r->app, runs[i].workload_seq, runs[i].uid, path, sizeof(path));
        size = file_size(path);
        if (!sent || size <= *sent)
            continue;
        got = read_at(path, *sent, buf, (size_t)(size - *sent < FOLLOW_READ_MAX
                                                     ? size - *sent : FOLLOW_READ_MAX));
        if (got == 0)
            continue;
        if (mg_send_chunk(f->r->conn, buf, (unsigned)got) <= 0)
            rc = -1;
        *sent += (int64_t)got;
        *news = 1;
    }
out:
    free(runs);
    free(buf);
    return rc;
}

/* Has the workload ended for good (gone, completed, failed, stopped)? */
static int workload_over(struct follow *f)
{
    struct db_workload w;
    int over;

    if (db_workload_get(f->r->app->db, f->w->id, &w) != DB_OK)
        return 1;
    over = w.deleted_at != 0 || strcmp(w.phase, "Completed") == 0 ||
           strcmp(w.phase, "Failed") == 0 || strcmp(w.phase, "Stopped") == 0;
    db_workload_clear(&w);
    return over;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void follow(struct api_req *r, struct db_workload *w, int pod,
                   const struct db_pod_run *runs, const int64_t *sent, int n, const char *text,
                   size_t len)
{
    struct follow f = {r, w, pod, NULL, NULL, 0, 0};
    int i, news, ended = 0;
    time_t until = time(NULL) + FOLLOW_MAX_S;

    r->status = 200;
    mg_printf(r->conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                       "Transfer-Encoding: chunked\r\nCache-Control: no-store\r\n"
                       "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n");
    for (i = 0; i < n; i++) {
        int64_t *s = sent_of(&f, runs[i].uid);
        if (s)
            *s = sent[i];
    }
    if (len > 0 && mg_send_chunk(r->conn, text, (unsigned)len) <= 0)
        goto out;
    while (!atomic_load(&stopping) && time(NULL) < until) {
        sleep_ms(FOLLOW_POLL_MS);
        if (follow_pass(&f, &news) != 0)
            goto out;
        if (!news && ended)
            break;
        ended = !news && workload_over(&f);
    }
    mg_write(r->conn, "0\r\n\r\n", 5);
out:
    free(f.uids);
    free(f.sent);
}

void api_logs_stop(void)
{
    atomic_store(&stopping, 1);
}

void api_h_wl_logs(struct api_req *r)
{
    struct db_workload w;
    struct db_pod_run *runs = NULL;
    struct logq q;
    int64_t *sent = NULL;
    char *text = NULL;
    size_t len = 0;
    int n = 0, rc;

    if (load_readable(r, &w) != 0 || logq_in(r, &w, &q) != 0)
        goto out;
    rc = db_pod_run_list(r->app->db, w.seq, q.pod, &runs, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list the pod's runs");
        goto out;
    }
    sent = calloc((size_t)n + 1, sizeof(*sent));
    text = sent ? read_tail(r->app, runs, n, &q, sent, &len) : NULL;
    if (!text) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    if (q.follow && atomic_fetch_add(&followers, 1) < MAX_FOLLOWERS) {
        follow(r, &w, q.pod, runs, sent, n, text, len);
        atomic_fetch_sub(&followers, 1);
        goto out;
    }
    if (q.follow)
        atomic_fetch_sub(&followers, 1);
    api_reply_text(r, 200, "text/plain; charset=utf-8", text, len);
out:
    free(text);
    free(sent);
    free(runs);
    db_workload_clear(&w);
}
