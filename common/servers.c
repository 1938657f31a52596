/*
 * servers.c: parsing a list of server URLs (servers.h).
 */
#include "servers.h"

#include <stdio.h>
#include <string.h>

static int failed(char *err, size_t err_len, const char *what, int len, const char *s)
{
    snprintf(err, err_len, "%s: '%.*s'", what, len, s);
    return -1;
}

int servers_parse(const char *list, struct servers *s, char *err, size_t err_len)
{
    const char *p = list, *end;
    int len;

    memset(s, 0, sizeof(*s));
    for (;;) {
        while (*p == ' ')
            p++;
        end = strchr(p, ',');
        len = end ? (int)(end - p) : (int)strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '/'))
            len--;
        if (len == 0)
            return failed(err, err_len, "names an empty server", (int)strlen(list), list);
        if (s->n == SERVERS_MAX)
            return failed(err, err_len, "names more than 8 servers", (int)strlen(list), list);
        if (len >= SERVER_URL_MAX)
            return failed(err, err_len, "names a URL too long", 40, p);
        if (!(len > 7 && strncmp(p, "http://", 7) == 0) &&
            !(len > 8 && strncmp(p, "https://", 8) == 0)) /* and name a host */
            return failed(err, err_len, "must start with http:// or https://", len, p);
        memcpy(s->url[s->n], p, (size_t)len);
        s->url[s->n++][len] = 0;
        if (!end)
            return 0;
        p = end + 1;
    }
}
