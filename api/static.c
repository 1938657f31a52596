/*
 * static.c: the dashboard's files (web/): finding the web root at start,
 * and serving GET / (index.html) and GET /<path> under it.
 *
 * Where the files are: --web-root DIR if given (refused at start unless it
 * holds index.html); else <dir of the allotd binary>/../share/allot/web
 * (an installed layout); else the source tree's web/ (ALLOT_WEB_ROOT, set
 * by CMake). With none of these, / answers a short page that says so.
 *
 * Invariants:
 *   1. Only regular files inside the web root are served. A request path is
 *      made of 1..8 segments of [A-Za-z0-9_-][A-Za-z0-9._-]* (so no "..",
 *      no hidden files, no empty segments, no backslashes); after
 *      realpath() the file must still lie inside the web root's realpath
 *      (a symlink leading out is refused).
 *   2. Directories are never listed: "/" is index.html, any other
 *      directory is a 404.
 *   3. Only known extensions are served, each with its content type;
 *      anything else is a 404.
 *   4. Every file reply carries a Content-Security-Policy whose default is
 *      'self' (no inline script or style, no other origin), and refuses
 *      framing.
 */
#define _XOPEN_SOURCE 700 /* realpath() */
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATIC_FILE_MAX (8 * 1024 * 1024)
#define STATIC_DEPTH_MAX 8

static const char static_headers[] =
    "Content-Security-Policy: default-src 'self'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'self'; "
    "frame-ancestors 'none'\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\n";

static const struct {
    const char *ext;
    const char *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
    {".md", "text/plain; charset=utf-8"},
};

static const char *type_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    size_t i;

    if (!dot || strchr(dot, '/'))
        return NULL;
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return NULL;
}

static int has_index(const char *dir)
{
    char p[PATH_MAX + 16];
    struct stat st;

    snprintf(p, sizeof(p), "%s/index.html", dir);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* realpath(dir) into out if dir holds index.html; 0 ok. */
static int take_root(const char *dir, char *out, size_t len)
{
    char real[PATH_MAX];

    if (!dir || !*dir || !realpath(dir, real) || !has_index(real) || strlen(real) >= len)
        return -1;
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

int api_static_init(const struct api_config *cfg, char *root, size_t len)
{
    char exe[PATH_MAX], cand[PATH_MAX + 32];
    ssize_t n;

    root[0] = 0;
    if (cfg->web_root[0]) {
        if (take_root(cfg->web_root, root, len) != 0) {
            fprintf(stderr, "allotd: --web-root %s: no index.html there\n", cfg->web_root);
            return -1;
        }
        return 0;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        char *slash;
        exe[n] = 0;
        slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(cand, sizeof(cand), "%s/../share/allot/web", exe);
            if (take_root(cand, root, len) == 0)
                return 0;
        }
    }
#ifdef ALLOT_WEB_ROOT
    if (take_root(ALLOT_WEB_ROOT, root, len) == 0)
        return 0;
#endif
    fprintf(stderr, "allotd: the dashboard's files were not found; use --web-root DIR\n");
    return 0;
}

/* Invariant 1's grammar for the path after the leading '/'. */
static int path_ok(const char *p)
{
    int depth = 0;

    if (!*p)
        return 0;
    while (*p) {
        size_t n = 0;
        if (++depth > STATIC_DEPTH_MAX || *p == '.' || *p == '/')
            return 0;
        for (; p[n] && p[n] != '/'; n++) {
            char c = p[n];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-'))
                return 0;
        }
        p += n;
        if (*p == '/') {
            p++;
            if (!*p)
                return 0;
        }
    }
    return 1;
}

/* Reads a regular file that realpath() places inside root; malloc'd. */
static char *read_inside(const char *root, const char *rel, size_t *len)
{
    char want[PATH_MAX + 8], real[PATH_MAX];
    size_t rl = strlen(root);
    struct stat st;
    char *buf = NULL;
    size_t got = 0;
    int fd;

    if (snprintf(want, sizeof(want), "%s/%s", root, rel) >= (int)sizeof(want) ||
        !realpath(want, real) || strncmp(real, root, rl) != 0 || real[rl] != '/')
        return NULL;
    fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > STATIC_FILE_MAX)
        goto out;
    buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        goto out;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    *len = got;
out:
    close(fd);
    return buf;
}

static void serve_file(struct api_req *r, const char *rel)
{
    const char *type = type_of(rel);
    size_t len = 0;
    char *body;

    if (!r->app->web_root[0] || !type || !path_ok(rel)) {
        api_error(r, 404, "Not found", r->path);
        return;
    }
    body = read_inside(r->app->web_root, rel, &len);
    if (!body) {
        api_error(r, 404, "Not found", r->path);
        return;
    }
    api_reply_with(r, 200, type, body, len, static_headers);
    free(body);
}

int api_static_wants(const struct api_req *r)
{
    return strcmp(r->method, "GET") == 0 && strncmp(r->path, "/api/", 5) != 0;
}

void api_static_serve(struct api_req *r)
{
    serve_file(r, r->path[0] == '/' ? r->path + 1 : r->path);
}

void api_h_dashboard(struct api_req *r)
{
    static const char page[] =
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>allot</title></head>"
        "<body><h1>allot</h1><p>The scheduler is running, but the dashboard's files were not "
        "found: start allotd with <code>--web-root DIR</code>. The API lives under "
        "<code>/api/v1</code>.</p></body></html>";

    if (!r->app->web_root[0]) {
        api_reply_with(r, 200, "text/html; charset=utf-8", page, sizeof(page) - 1,
                       static_headers);
        return;
    }
    serve_file(r, "index.html");
}
