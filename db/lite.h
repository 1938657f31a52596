/*
 * lite.h: the SQLite engine under db/'s statement layer, shared by the two
 * files that know it: db.c (connections, the writer, the read pool) and
 * stmt.c (statements). No other file of db/ includes it, so none of them
 * can reach SQLite except through stmt.c.
 *
 * A struct db__stmt is SQLite's own sqlite3_stmt, never defined: stmt.c
 * converts the pointer at its edge (LITE()), so a statement costs nothing
 * over SQLite's.
 */
#ifndef ALLOT_DB_LITE_H
#define ALLOT_DB_LITE_H

#include "db_int.h"

#include <sqlite3.h>

#define DB__STMT_CACHE 200

struct db__conn {
    sqlite3 *h;
    int n_stmts;
    struct {
        const char *sql; /* identity is the pointer: SQL lives in static strings */
        sqlite3_stmt *st;
    } stmts[DB__STMT_CACHE];
};

#define LITE(st) ((sqlite3_stmt *)(st))

/* Maps a SQLite result code to a DB_E* code. */
int db__rc(int src);

#endif /* ALLOT_DB_LITE_H */
