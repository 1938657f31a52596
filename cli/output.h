/*
 * output.h: the machine-readable outputs of the client: the API's JSON
 * objects as they came (--json, -o json) and the same document as YAML
 * (--yaml, -o yaml).
 */
#ifndef ALLOT_OUTPUT_H
#define ALLOT_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

enum out_format { OUT_TABLE = 0, OUT_JSON, OUT_YAML, OUT_BARE, OUT_CSV, OUT_CSV_BARE };
/* BARE: --no-headers; CSV_BARE: --csv --no-headers */

/* Prints v as indented JSON, keys in the server's order, and a newline. */
void out_json(FILE *out, const json_t *v);

/* Prints v as a YAML document. */
void out_yaml(FILE *out, const json_t *v);

/* out_json or out_yaml by format; 0 ok. */
int out_document(FILE *out, int format, const json_t *v);

#endif
