/*
 * pq.h: the PostgreSQL engine under db/'s statement layer (pq.c), shared
 * by the files that choose between the engines: db.c (connections, the
 * writer, the read pool) and stmt.c (statements). Like lite.h for SQLite,
 * no other file of db/ includes it.
 *
 * A connection is a libpq session with its reconnect state; a statement
 * is SQLite's SQL rewritten once for PostgreSQL (pq.c, the dialect table)
 * and prepared on the session the first time it runs there.
 */
#ifndef ALLOT_DB_PQ_H
#define ALLOT_DB_PQ_H

#include "db_int.h"

struct db__pq;
struct db__pq_stmt;

/* Is this --db value a PostgreSQL connection URI (postgresql://, postgres://)? */
int db__pq_uri(const char *path);
/* Connects (a reader's session is read-only). DB_EUNAVAIL, said on stderr,
 * if the server cannot be reached; *out is set either way and reconnects
 * by itself later (db__pq_close frees it). */
int db__pq_open(const char *uri, int readonly, struct db__pq **out);
void db__pq_close(struct db__pq *c);
/* The server's last error on this session, for messages. */
const char *db__pq_error(struct db__pq *c);
/* "PostgreSQL 15.x, synchronous_commit=on, fsync=on", read back. */
void db__pq_describe(struct db__pq *c, char *out, size_t len);
/* Where the database is, without the password: "database D on H". */
void db__pq_where(const char *uri, char *out, size_t len);
/* The engine's own objects (schema version row, SQLite-compatible
 * functions) and, for a fresh database, dropping every table first. */
int db__pq_setup(struct db__pq *c, int fresh);
/* The statement_timeout of the sessions opened from now on (ms, 0 none);
 * db__pq_timeout lifts it on one session (on 0) or puts it back (on 1). */
void db__pq_set_timeout(int ms);
int db__pq_timeout(struct db__pq *c, int on);

/* cached: prepared once on the session under a name (db__prep); else
 * run unnamed each time (db__prep_once). */
int db__pq_prep(struct db__pq *c, const char *sql, int cached, struct db__pq_stmt **out);
void db__pq_finalize(struct db__pq_stmt *st);
/* Drops a named statement's plan from its session (DEALLOCATE, sent
 * without waiting), for a cache that lets it go before the session ends. */
void db__pq_forget(struct db__pq_stmt *st);
void db__pq_reset(struct db__pq_stmt *st);
int db__pq_step(struct db__pq_stmt *st);
/* db__step_done: inside a transaction the statement may go without
 * waiting for its reply (pq.c, the pipeline): DB_OK then, and a failure
 * shows at the next statement that waits, and at db__pq_flush. */
int db__pq_step_done(struct db__pq_stmt *st);
/* Reads every reply pending; the first failure since the last call. */
int db__pq_flush(struct db__pq *c);
int db__pq_exec(struct db__pq *c, const char *sql);
int64_t db__pq_changes(struct db__pq *c);
int64_t db__pq_last_id(struct db__pq *c);
int db__pq_params(struct db__pq_stmt *st);

void db__pq_bind_int64(struct db__pq_stmt *st, int i, int64_t v);
void db__pq_bind_double(struct db__pq_stmt *st, int i, double v);
/* s NULL binds NULL; owned: s was malloc'd and is the statement's now. */
void db__pq_bind_text(struct db__pq_stmt *st, int i, const char *s, int copy);
void db__pq_bind_owned(struct db__pq_stmt *st, int i, char *s);

const char *db__pq_col_text(struct db__pq_stmt *st, int col);
int64_t db__pq_col_int64(struct db__pq_stmt *st, int col);
double db__pq_col_double(struct db__pq_stmt *st, int col);

#endif /* ALLOT_DB_PQ_H */
