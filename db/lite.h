/*
 * lite.h: the SQLite engine under db/'s statement layer, shared by the two
 * files that know it: db.c (connections, the writer, the read pool) and
 * stmt.c (statements). No other file of db/ includes it, so none of them
 * can reach SQLite except through stmt.c.
 *
 * A connection is one of two engines: SQLite (h) or PostgreSQL (pq, pq.h)
 * when db_open() was given a postgresql:// URI. A statement is the
 * engine's statement (one of lt, pq set); stmt.c dispatches on it, so the
 * rest of db/ never asks which engine runs.
 */
#ifndef ALLOT_DB_LITE_H
#define ALLOT_DB_LITE_H

#include "db_int.h"

#include <sqlite3.h>

#define DB__STMT_CACHE 200
#define DB__TEXT_CACHE 16 /* statements built at run time, per connection (db__prep_text) */

struct db__pq;
struct db__pq_stmt;

struct db__stmt {
    sqlite3_stmt *lt;
    struct db__pq_stmt *pq;
};

struct db__conn {
    sqlite3 *h;
    struct db__pq *pq;   /* PostgreSQL: h is NULL */
    int n_stmts;
    struct {
        const char *sql; /* identity is the pointer: SQL lives in static strings */
        struct db__stmt st;
    } stmts[DB__STMT_CACHE];
    uint64_t text_clock; /* uses of text[], for the least recently used */
    struct {
        char *sql;       /* identity is the text (malloc'd); NULL: a free slot */
        uint64_t hash, used;
        struct db__stmt st;
    } text[DB__TEXT_CACHE];
    struct db__page_memo *page_memo; /* a reader's last page of workloads (workloads.c) */
};

#define LITE(st) ((st)->lt)

/* Maps a SQLite result code to a DB_E* code. */
int db__rc(int src);

#endif /* ALLOT_DB_LITE_H */
