/*
 * clientaddr.c: the address a request comes from. It is the peer's
 * address (civetweb's remote_addr), unless the peer is a trusted proxy
 * (--trusted-proxy CIDR[,CIDR...]): then it is read from the proxy's
 * client-address header (--client-address-header, X-Forwarded-For by
 * default, or Forwarded, RFC 7239). That address keys the per-address
 * rate limit (http.c) and is the address an agent registers from when
 * it names none (h_agent.c).
 *
 * Steps (api_client_address):
 *   1. The peer is not in a trusted range (or none is configured): the
 *      peer, whatever headers the request carries, so a client cannot
 *      choose its own address.
 *   2. Every line of the header, in order, makes one list of hops, the
 *      client first and each proxy appending the address it heard from.
 *   3. The hops are walked from the right: a trusted hop is a proxy of
 *      ours, so the walk goes on left; the first untrusted hop is the
 *      client. The hops left of it are whatever that client sent, and
 *      are never read.
 *   4. A hop that is not an IP address (a name, "unknown", an obfuscated
 *      Forwarded node) ends the walk: the address is the last hop read
 *      (the nearest trusted proxy), or the peer.
 *
 * Invariant: the answer is always an address the chain of trusted
 * proxies vouches for, written as inet_ntop writes it.
 */
#include "api.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Parses "ADDR" or "ADDR/BITS" (IPv4 or IPv6). 0, or -1. */
static int cidr_parse(const char *s, size_t n, struct api_cidr *c)
{
    char text[64], *slash, *end;
    long bits;

    if (n == 0 || n >= sizeof(text))
        return -1;
    memcpy(text, s, n);
    text[n] = 0;
    slash = strchr(text, '/');
    if (slash)
        *slash = 0;
    memset(c, 0, sizeof(*c));
    if (inet_pton(AF_INET, text, c->addr) == 1)
        c->family = AF_INET;
    else if (inet_pton(AF_INET6, text, c->addr) == 1)
        c->family = AF_INET6;
    else
        return -1;
    c->bits = c->family == AF_INET ? 32 : 128;
    if (slash) {
        bits = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end || bits < 0 || bits > c->bits)
            return -1;
        c->bits = (int)bits;
    }
    return 0;
}

int api_cidrs_parse(const char *list, struct api_cidr *out, int max, int *n)
{
    const char *p = list, *comma;
    size_t len;

    *n = 0;
    while (*p) {
        comma = strchr(p, ',');
        len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && *p == ' ') {
            p++;
            len--;
        }
        while (len && p[len - 1] == ' ')
            len--;
        if (*n >= max || cidr_parse(p, len, &out[*n]) != 0)
            return -1;
        (*n)++;
        p = comma ? comma + 1 : p + strlen(p);
    }
    return *n > 0 ? 0 : -1;
}

/* An address as bytes; an IPv4-mapped IPv6 address is its IPv4 one. */
static int addr_parse(const char *text, int *family, unsigned char bytes[16])
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    if (inet_pton(AF_INET, text, bytes) == 1) {
        *family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, text, bytes) != 1)
        return -1;
    *family = AF_INET6;
    if (memcmp(bytes, mapped, 12) == 0) {
        memmove(bytes, bytes + 12, 4);
        *family = AF_INET;
    }
    return 0;
}

static int in_ranges(const struct api_cidr *c, int n, int family, const unsigned char *bytes)
{
    int i, full, rest;

    for (i = 0; i < n; i++) {
        if (c[i].family != family)
            continue;
        full = c[i].bits / 8;
        rest = c[i].bits % 8;
        if (memcmp(c[i].addr, bytes, (size_t)full) != 0)
            continue;
        if (rest && ((c[i].addr[full] ^ bytes[full]) & (0xff << (8 - rest)) & 0xff))
            continue;
        return 1;
    }
    return 0;
}

int api_cidrs_match(const struct api_cidr *c, int n, const char *addr)
{
    unsigned char bytes[16];
    int family;

    return addr_parse(addr, &family, bytes) == 0 && in_ranges(c, n, family, bytes);
}

/* One hop's text (s, n) as an address in out: "[v6]:port", "v4:port",
 * a bare address, a quoted Forwarded value. 0, or -1 (not an address). */
static int hop_address(const char *s, size_t n, char *out, size_t len)
{
    char text[80], *colon;
    unsigned char bytes[16];
    int family;

    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    if (n == 0 || n >= sizeof(text))
        return -1;
    memcpy(text, s, n);
    text[n] = 0;
    if (text[0] == '[') { /* [v6] or [v6]:port */
        colon = strchr(text, ']');
        if (!colon || (colon[1] && colon[1] != ':'))
            return -1;
        *colon = 0;
        memmove(text, text + 1, strlen(text));
    } else if ((colon = strchr(text, ':')) && !strchr(colon + 1, ':')) {
        *colon = 0; /* v4:port */
    }
    if (addr_parse(text, &family, bytes) != 0)
        return -1;
    return inet_ntop(family, bytes, out, (socklen_t)len) ? 0 : -1;
}

/* The for= value of one Forwarded element (s, n); n 0 if none. */
static void forwarded_for(const char *s, size_t n, const char **v, size_t *vn)
{
    const char *end = s + n, *semi;

    *vn = 0;
    while (s < end) {
        semi = memchr(s, ';', (size_t)(end - s));
        if (!semi)
            semi = end;
        while (s < semi && (*s == ' ' || *s == '\t'))
            s++;
        if (semi - s > 4 && strncasecmp(s, "for=", 4) == 0) {
            *v = s + 4;
            *vn = (size_t)(semi - s - 4);
            return;
        }
        s = semi + 1;
    }
}

void api_client_address(const struct api_client_trust *t, const char *peer,
                        const char *const *lines, int n_lines, char *out, size_t len)
{
    char hop[64];
    const char *s, *e, *v;
    size_t vn;
    int i;

    snprintf(out, len, "%s", peer); /* step 1 */
    if (t->n_trusted == 0 || !api_cidrs_match(t->trusted, t->n_trusted, peer))
        return;
    /* steps 2-3: lines right to left, hops right to left in each */
    for (i = n_lines - 1; i >= 0; i--) {
        s = lines[i];
        e = s + strlen(s);
        while (e > s) {
            const char *start = e;
            while (start > s && start[-1] != ',')
                start--;
            v = start;
            vn = (size_t)(e - start);
            if (t->forwarded)
                forwarded_for(start, (size_t)(e - start), &v, &vn);
            if (hop_address(v, vn, hop, sizeof(hop)) != 0)
                return; /* step 4 */
            snprintf(out, len, "%s", hop);
            if (!api_cidrs_match(t->trusted, t->n_trusted, hop))
                return;
            e = start > s ? start - 1 : s;
        }
    }
}
