/*
 * quantity.h: memory quantities as Kubernetes writes them ("512Mi",
 * "1.5G", "1e9"), read exactly the same way by the server and the CLI.
 */
#ifndef ALLOT_QUANTITY_H
#define ALLOT_QUANTITY_H

#include <stdint.h>

/* The largest quantity accepted: 1 EiB, in MiB. */
#define QUANTITY_MAX_MIB (INT64_C(1) << 40)

/* Parses s into MiB, rounded up; 0 ok, -1 if s is not a quantity of at
 * most QUANTITY_MAX_MIB. */
int quantity_mib(const char *s, int64_t *out);

#endif /* ALLOT_QUANTITY_H */
