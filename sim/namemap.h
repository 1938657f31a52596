/*
 * namemap.h: a map from borrowed strings to ints, for looking names up.
 *
 * Open addressing with linear probing over a power-of-two table kept at
 * most half full. Keys are borrowed (the caller keeps them alive as long
 * as the map); entries are never removed, a caller that forgets a name
 * stores a value that says so. Nothing iterates the table, so its layout
 * never shows in any output.
 */
#ifndef ALLOT_NAMEMAP_H
#define ALLOT_NAMEMAP_H

#include <stddef.h>

struct namemap {
    const char **keys;   /* [cap]; NULL: empty slot */
    int *values;         /* [cap] */
    size_t cap;          /* 0 or a power of two */
    size_t n;
};

void namemap_init(struct namemap *m);
void namemap_free(struct namemap *m);   /* frees the table, not the keys */

/* Sets key -> value, adding the key if it is new. Borrows key.
 * Returns 0, or -1 when memory runs out. */
int namemap_put(struct namemap *m, const char *key, int value);

/* 1 and *value set when key is present, else 0. */
int namemap_get(const struct namemap *m, const char *key, int *value);

#endif
