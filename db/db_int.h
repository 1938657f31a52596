/*
 * db_int.h: what the files of db/ share and nobody else sees: the write
 * and read entry points, the statement layer (stmt.c) through which they
 * reach the engine, and small helpers. The engines themselves (SQLite,
 * PostgreSQL) are known to lite.h and pq.h and the files that include
 * them (db.c, stmt.c, pq.c) only.
 *
 * Invariants:
 *   1. A struct db__conn is used by one thread at a time: the writer owns
 *      its connection; a reader holds one from the pool for one call.
 *   2. Statements from db__prep() belong to the connection's cache; the
 *      caller resets them (db__done()) and never finalizes them.
 */
#ifndef ALLOT_DB_INT_H
#define ALLOT_DB_INT_H

#include "db.h"

#include <stddef.h>
#include <stdint.h>

/* One connection to the store (lite.h): used by one thread at a time. */
struct db__conn;

typedef int (*db__fn)(struct db__conn *c, void *arg);

/* Runs fn inside the writer's next group transaction (in a savepoint) and
 * waits until that transaction has committed. Returns fn's code, or
 * DB_EIO if the commit failed. fn may return DB__MORE: it did one turn
 * and is called again (in a savepoint of its own, and on SQLite, when
 * other writes wait, after their commit: db.c's writer) until it returns
 * anything else. */
int db__write(struct db *db, db__fn fn, void *arg);
/* The form of an op for a run of them: n ops' args at once, in one
 * savepoint (set-based on PostgreSQL), each op's own refusal (a check that writes nothing for
 * it) in rcs[i]. Any other failure rolls the group back, and each op runs
 * alone through its fn, so the codes are the fn's. */
typedef int (*db__group_fn)(struct db__conn *c, void *const *args, int *rcs, int n);
/* db__write() of fn; ops queued next to each other with the same group
 * (and fence) are written by one call of it, in one savepoint. */
int db__write_group(struct db *db, db__fn fn, db__group_fn group, void *arg);
/* Called by the writer once the COMMIT holding an op that succeeded has
 * returned, before its caller is woken, with db->mu held. */
typedef void (*db__committed_fn)(struct db *db, void *arg);
/* db__write_group() that calls committed(db, arg) as above. */
int db__write_then(struct db *db, db__fn fn, db__group_fn group, db__committed_fn committed,
                   void *arg);
/* The hook db_on_submitted() set, called for seq; under db->mu (a
 * db__committed_fn's caller holds it). */
void db__submitted(struct db *db, int64_t workload_seq);
/* Runs fn in one read transaction on a pooled read connection. */
int db__read(struct db *db, db__fn fn, void *arg);

/* ---- the leader's fence (lease.c) ----
 * db__write() runs db__fence() first in the op's savepoint when the
 * calling thread set an epoch (db_fence_set()), and notes a refusal. */
int64_t db__fence_epoch(void);
/* DB_OK while the lease is at epoch and unexpired; DB_EFENCED otherwise. */
int db__fence(struct db__conn *c, int64_t epoch);
void db__fence_note(int rc);

/* ---- the change log (changes.c) ----
 * A row of the log inside the caller's write (kind: enum db_change_kind). */
int db__change(struct db__conn *c, int kind, int64_t workload_seq);
/* db__write() of fn, with a row of `kind` in the same savepoint once fn
 * succeeded. */
int db__write_noted(struct db *db, int kind, db__fn fn, void *arg);

/* ---- statements (stmt.c) ----
 * The one way the files of db/ talk to the engine: prepare, bind, step,
 * read columns. Parameters are `?`, numbered from 1; columns from 0. A
 * text column's pointer is valid until the next step or reset. */
struct db__stmt;

/* The database's clock in ms since the epoch (SQLite: julianday of the
 * statement's start), in SQL. */
#define DB_NOW "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

#define DB__ROW 100  /* db__step: a row is ready */
#define DB__DONE 101 /* db__step: the statement ran to its end */
#define DB__MORE 102 /* a db__write() fn: one turn done, call again */

/* A cached prepared statement, reset and unbound; NULL with *rc set on error. */
struct db__stmt *db__prep(struct db__conn *c, const char *sql, int *rc);
/* A statement built at run time (a list's filters and order), cached by
 * its text on the connection (a few, the least recently used evicted):
 * used as db__prep()'s, reset with db__done(), never finalized. */
struct db__stmt *db__prep_text(struct db__conn *c, const char *sql, int *rc);
/* Finalizes every cached statement of a connection (its close). */
void db__stmts_free(struct db__conn *c);
/* A statement made for one use (SQL built at run time): DB_OK with *out
 * set, or DB_EIO (said on stderr); db__finalize() frees it. */
int db__prep_once(struct db__conn *c, const char *sql, struct db__stmt **out);
void db__finalize(struct db__stmt *st);
/* Resets a cached statement after use; passes rc through. */
int db__done(struct db__stmt *st, int rc);
/* DB__ROW, DB__DONE, or a DB_E* code. */
int db__step(struct db__stmt *st);
/* Runs a statement without rows: DB_OK, DB_ECONFLICT (constraint), DB_EIO.
 * Inside a write the engine may send it without waiting for its reply
 * (PostgreSQL's pipeline): it returns DB_OK then, and a failure shows at
 * the next statement that waits for one, and at db__flush(). */
int db__step_done(struct db__stmt *st);
/* Waits for the statements sent without waiting; the first failure among
 * them since the last call (what the op that ran them failed with), or
 * DB_OK. SQLite runs each statement at once: always DB_OK. */
int db__flush(struct db__conn *c);
int db__exec(struct db__conn *c, const char *sql);
/* Rows the last INSERT, UPDATE or DELETE of the connection changed, and
 * the key its last INSERT gave its row. */
int64_t db__changes(struct db__conn *c);
/* Whether the connection is PostgreSQL's, for the few statements that
 * carry a variant for it (triggers, table rebuilds): pq.c's dialect
 * rewrite covers the rest. */
int db__is_pq(struct db__conn *c);
int64_t db__last_id(struct db__conn *c);

void db__bind_int(struct db__stmt *st, int i, int v);
void db__bind_int64(struct db__stmt *st, int i, int64_t v);
void db__bind_double(struct db__stmt *st, int i, double v);
void db__bind_null(struct db__stmt *st, int i);
/* Text copied at the bind; NULL binds "". */
void db__bind_text(struct db__stmt *st, int i, const char *s);
/* Text not copied: s must outlive the statement's use; NULL binds NULL. */
void db__bind_static(struct db__stmt *st, int i, const char *s);
/* Text malloc'd by the caller, freed by the statement (also on failure). */
void db__bind_owned(struct db__stmt *st, int i, char *s);
/* How many parameters the statement has (the highest number). */
int db__params(struct db__stmt *st);

int db__col_int(struct db__stmt *st, int col);
int64_t db__col_int64(struct db__stmt *st, int col);
double db__col_double(struct db__stmt *st, int col);
/* NULL for SQL NULL. */
const char *db__col_text(struct db__stmt *st, int col);
int db__col_null(struct db__stmt *st, int col);
/* A text column into dst (truncated to size - 1; NULL gives ""). */
void db__copy(char *dst, size_t size, struct db__stmt *st, int col);
/* ---- column tables (rows.c) ----
 * A table's file describes its row once: the struct fields its columns
 * go to, in the order its statements name them (DB__COLS, which takes
 * each column's kind from its field's C type; DB__COL names one column
 * and its kind). The binder and the readers walk the table. */
enum db__col_type {
    DB__INT,    /* an integer field of any width (int, int64_t, uint64_t...) */
    DB__DOUBLE, /* a double */
    DB__TEXT,   /* a fixed char array: cut to its size - 1, NULL as "" */
    DB__DUP,    /* a char *: read as a malloc'd copy the row owns (NULL as ""),
                 * bound as its text (NULL as "") */
    DB__DUP_NULL, /* the same, NULL kept as NULL both ways */
    DB__NULL     /* a parameter only (struct db__arg): SQL NULL */
};
struct db__col {
    const char *name;   /* the field (documentation) */
    unsigned char type; /* enum db__col_type */
    size_t size;        /* the field's size */
    size_t off;         /* offsetof() in the struct */
};
#define DB__COL(T, field, type) {#field, type, sizeof(((T *)0)->field), offsetof(T, field)}
/* The kind of a field, from its C type: a char array DB__TEXT, a char *
 * (or const char *) DB__DUP, a double DB__DOUBLE, any other (an integer) DB__INT. A
 * DB__DUP_NULL column is named with DB__COL. */
#define DB__KIND(T, field)                                                     \
    _Generic(&((T *)0)->field,                                                 \
        char (*)[sizeof(((T *)0)->field)]: DB__TEXT,                          \
        char **: DB__DUP,                                                      \
        const char **: DB__DUP,                                                \
        double *: DB__DOUBLE,                                                  \
        default: DB__INT)
/* The columns of a table as its struct's fields, in the statement's
 * order, each of the kind its C type gives (DB__KIND): the entries of a
 * struct db__col array, for up to 48 fields. */
#define DB__COLS(T, ...) DB__CAT(DB__COLS_, DB__NARG(__VA_ARGS__))(T, __VA_ARGS__)
#define DB__CAT(a, b) DB__CAT_(a, b)
#define DB__CAT_(a, b) a##b
#define DB__C1(T, f) DB__COL(T, f, DB__KIND(T, f))
#define DB__COLS_1(T, f) DB__C1(T, f)
#define DB__COLS_2(T, f, ...) DB__C1(T, f), DB__COLS_1(T, __VA_ARGS__)
#define DB__COLS_3(T, f, ...) DB__C1(T, f), DB__COLS_2(T, __VA_ARGS__)
#define DB__COLS_4(T, f, ...) DB__C1(T, f), DB__COLS_3(T, __VA_ARGS__)
#define DB__COLS_5(T, f, ...) DB__C1(T, f), DB__COLS_4(T, __VA_ARGS__)
#define DB__COLS_6(T, f, ...) DB__C1(T, f), DB__COLS_5(T, __VA_ARGS__)
#define DB__COLS_7(T, f, ...) DB__C1(T, f), DB__COLS_6(T, __VA_ARGS__)
#define DB__COLS_8(T, f, ...) DB__C1(T, f), DB__COLS_7(T, __VA_ARGS__)
#define DB__COLS_9(T, f, ...) DB__C1(T, f), DB__COLS_8(T, __VA_ARGS__)
#define DB__COLS_10(T, f, ...) DB__C1(T, f), DB__COLS_9(T, __VA_ARGS__)
#define DB__COLS_11(T, f, ...) DB__C1(T, f), DB__COLS_10(T, __VA_ARGS__)
#define DB__COLS_12(T, f, ...) DB__C1(T, f), DB__COLS_11(T, __VA_ARGS__)
#define DB__COLS_13(T, f, ...) DB__C1(T, f), DB__COLS_12(T, __VA_ARGS__)
#define DB__COLS_14(T, f, ...) DB__C1(T, f), DB__COLS_13(T, __VA_ARGS__)
#define DB__COLS_15(T, f, ...) DB__C1(T, f), DB__COLS_14(T, __VA_ARGS__)
#define DB__COLS_16(T, f, ...) DB__C1(T, f), DB__COLS_15(T, __VA_ARGS__)
#define DB__COLS_17(T, f, ...) DB__C1(T, f), DB__COLS_16(T, __VA_ARGS__)
#define DB__COLS_18(T, f, ...) DB__C1(T, f), DB__COLS_17(T, __VA_ARGS__)
#define DB__COLS_19(T, f, ...) DB__C1(T, f), DB__COLS_18(T, __VA_ARGS__)
#define DB__COLS_20(T, f, ...) DB__C1(T, f), DB__COLS_19(T, __VA_ARGS__)
#define DB__COLS_21(T, f, ...) DB__C1(T, f), DB__COLS_20(T, __VA_ARGS__)
#define DB__COLS_22(T, f, ...) DB__C1(T, f), DB__COLS_21(T, __VA_ARGS__)
#define DB__COLS_23(T, f, ...) DB__C1(T, f), DB__COLS_22(T, __VA_ARGS__)
#define DB__COLS_24(T, f, ...) DB__C1(T, f), DB__COLS_23(T, __VA_ARGS__)
#define DB__COLS_25(T, f, ...) DB__C1(T, f), DB__COLS_24(T, __VA_ARGS__)
#define DB__COLS_26(T, f, ...) DB__C1(T, f), DB__COLS_25(T, __VA_ARGS__)
#define DB__COLS_27(T, f, ...) DB__C1(T, f), DB__COLS_26(T, __VA_ARGS__)
#define DB__COLS_28(T, f, ...) DB__C1(T, f), DB__COLS_27(T, __VA_ARGS__)
#define DB__COLS_29(T, f, ...) DB__C1(T, f), DB__COLS_28(T, __VA_ARGS__)
#define DB__COLS_30(T, f, ...) DB__C1(T, f), DB__COLS_29(T, __VA_ARGS__)
#define DB__COLS_31(T, f, ...) DB__C1(T, f), DB__COLS_30(T, __VA_ARGS__)
#define DB__COLS_32(T, f, ...) DB__C1(T, f), DB__COLS_31(T, __VA_ARGS__)
#define DB__COLS_33(T, f, ...) DB__C1(T, f), DB__COLS_32(T, __VA_ARGS__)
#define DB__COLS_34(T, f, ...) DB__C1(T, f), DB__COLS_33(T, __VA_ARGS__)
#define DB__COLS_35(T, f, ...) DB__C1(T, f), DB__COLS_34(T, __VA_ARGS__)
#define DB__COLS_36(T, f, ...) DB__C1(T, f), DB__COLS_35(T, __VA_ARGS__)
#define DB__COLS_37(T, f, ...) DB__C1(T, f), DB__COLS_36(T, __VA_ARGS__)
#define DB__COLS_38(T, f, ...) DB__C1(T, f), DB__COLS_37(T, __VA_ARGS__)
#define DB__COLS_39(T, f, ...) DB__C1(T, f), DB__COLS_38(T, __VA_ARGS__)
#define DB__COLS_40(T, f, ...) DB__C1(T, f), DB__COLS_39(T, __VA_ARGS__)
#define DB__COLS_41(T, f, ...) DB__C1(T, f), DB__COLS_40(T, __VA_ARGS__)
#define DB__COLS_42(T, f, ...) DB__C1(T, f), DB__COLS_41(T, __VA_ARGS__)
#define DB__COLS_43(T, f, ...) DB__C1(T, f), DB__COLS_42(T, __VA_ARGS__)
#define DB__COLS_44(T, f, ...) DB__C1(T, f), DB__COLS_43(T, __VA_ARGS__)
#define DB__COLS_45(T, f, ...) DB__C1(T, f), DB__COLS_44(T, __VA_ARGS__)
#define DB__COLS_46(T, f, ...) DB__C1(T, f), DB__COLS_45(T, __VA_ARGS__)
#define DB__COLS_47(T, f, ...) DB__C1(T, f), DB__COLS_46(T, __VA_ARGS__)
#define DB__COLS_48(T, f, ...) DB__C1(T, f), DB__COLS_47(T, __VA_ARGS__)
#define DB__NARG(...) DB__NARG_(__VA_ARGS__, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, \
    36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, \
    14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define DB__NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
    _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, \
    _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, n, ...) n
#define DB__NCOLS(cols) ((int)(sizeof(cols) / sizeof((cols)[0])))
/* A row: its columns from the statement's first, the struct's size, and
 * what the columns do not give (derived fields) set after a read (NULL:
 * nothing). */
struct db__shape {
    const struct db__col *cols;
    int n;
    size_t size;
    void (*fix)(void *row);
};
#define DB__SHAPE(T, cols, fix) {cols, DB__NCOLS(cols), sizeof(T), fix}
/* A table whose columns are all DB__COLS: its column array `cols` and its
 * shape `shape` (fix as for DB__SHAPE) in one declaration. */
#define DB__TABLE(cols, shape, T, fix, ...)                                    \
    static const struct db__col cols[] = {DB__COLS(T, __VA_ARGS__)};          \
    static const struct db__shape shape = DB__SHAPE(T, cols, fix)
/* Reads n columns from column `col` on into row's fields (nothing else):
 * DB_OK, or DB_ENOMEM if a DB__DUP copy failed (its field NULL). */
int db__cols_read(struct db__stmt *st, int col, const struct db__col *cols, int n, void *row);
/* Binds n fields of row to the parameters from `param` on. */
void db__cols_bind(struct db__stmt *st, int param, const struct db__col *cols, int n,
                   const void *row);
/* Frees row's DB__DUP and DB__DUP_NULL fields and sets them NULL (row
 * NULL: nothing); the rest of row stays. */
void db__row_clear(const struct db__shape *s, void *row);
/* db__row_clear() of each of the n rows of the malloc'd array arr, then
 * the array (NULL: nothing). */
void db__rows_free(const struct db__shape *s, void *arr, int n);
/* A row of the shape from column col on, into a zeroed *row, then fix;
 * db__cols_read()'s code. */
int db__row_read(struct db__stmt *st, int col, const struct db__shape *s, void *row);
/* Steps st once and reads its row: DB_OK, DB_ENOTFOUND (no row) or
 * DB_EIO; resets st (db__done). */
int db__row_one(struct db__stmt *st, const struct db__shape *s, void *row);
/* Steps st to its end, appending each row to the malloc'd array at arrp
 * (a T **, as for db__grow) of *n rows; resets st. DB_OK, DB_ENOMEM or
 * DB_EIO (the rows read so far stay). */
int db__row_list(struct db__stmt *st, const struct db__shape *s, void *arrp, int *n);
/* A step that must give one row: DB_OK, DB_ENOTFOUND (none) or DB_EIO. */
int db__one_row(int src);
/* db__row_list() of a cached statement without parameters. */
int db__rows_of(struct db__conn *c, const char *sql, const struct db__shape *s, void *arrp,
                int *n);
/* The one parameter of a read: text if it is not NULL, else i. */
struct db__key {
    int64_t i;
    const char *text;
};
/* A db__read_list() of sql's rows (key NULL: sql has no parameter; on
 * failure the rows read are freed with db__rows_free()), and a db__read()
 * of its one row (db__row_one()'s codes). */
int db__read_rows(struct db *db, const char *sql, const struct db__key *key,
                  const struct db__shape *s, void *arrp, int *n);
int db__read_row(struct db *db, const char *sql, struct db__key key, const struct db__shape *s,
                 void *row);
/* A cached statement without rows whose one parameter is key. */
int db__run_key(struct db__conn *c, const char *sql, int64_t key);
int db__run_text_key(struct db__conn *c, const char *sql, const char *key);
/* db__write() of db__run_key(). */
int db__write_key(struct db *db, const char *sql, int64_t key);
/* The first column of the one row of a cached statement of one integer
 * parameter (a count): DB_OK, or DB_EIO if it gave none. */
int db__int_of(struct db__conn *c, const char *sql, int64_t key, int64_t *out);
/* ---- one-off statements (rows.c) ----
 * A statement used in one place is described there once: its SQL and a
 * table of its parameters' values, in order (?1, ?2, ...), which one call
 * below prepares, binds, runs and reads. */
struct db__arg {
    unsigned char type; /* DB__INT (i), DB__DOUBLE (d), DB__TEXT (s, NULL binds ""),
                         * DB__DUP_NULL (s, NULL binds NULL), DB__NULL */
    int64_t i;
    double d;
    const char *s;
};
#define DB__I(v) {.type = DB__INT, .i = (v)}
#define DB__F(v) {.type = DB__DOUBLE, .d = (v)}
#define DB__S(v) {.type = DB__TEXT, .s = (v)}
#define DB__S_NULL(v) {.type = DB__DUP_NULL, .s = (v)}
#define DB__NULL_ARG {.type = DB__NULL}
#define DB__NARGS(args) ((int)(sizeof(args) / sizeof((args)[0])))
/* Reads the current row of st into arg: DB_OK or a DB_E* code. */
typedef int (*db__reader)(struct db__stmt *st, void *arg);
/* Binds n values to the parameters from 1 on (text copied at the bind). */
void db__args_bind(struct db__stmt *st, const struct db__arg *args, int n);
/* A cached statement without rows: db__step_done()'s codes. */
int db__exec_args(struct db__conn *c, const char *sql, const struct db__arg *args, int n);
/* Its one row into row (db__row_one()) or its rows appended to *arrp
 * (db__row_list()). */
int db__query_row(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                  const struct db__shape *s, void *row);
int db__query_rows(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                   const struct db__shape *s, void *arrp, int *count);
/* Its first row read by fn (NULL: only whether there is one): fn's code,
 * DB_ENOTFOUND (no row) or DB_EIO. */
int db__query_one(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                  db__reader fn, void *arg);
/* Each of its rows read by fn, until fn fails: DB_OK, fn's code or DB_EIO. */
int db__query_each(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                   db__reader fn, void *arg);
/* A cached statement without rows whose parameters are n fields of row
 * (db__cols_bind() from 1): db__step_done()'s codes. */
int db__exec_cols(struct db__conn *c, const char *sql, const struct db__col *cols, int n,
                  const void *row);
/* db__exec_cols() of an INSERT, and the key it gave its row in *id. */
int db__insert_cols(struct db__conn *c, const char *sql, const struct db__col *cols, int n,
                    const void *row, int64_t *id);
/* A table's INSERT: its parameters are the shape's columns from the
 * second on, in order; the first is the key the insert gives the row. */
struct db__insert {
    const char *sql;
    const struct db__shape *shape;
    int noted;  /* a row of the change log of kind `change` in the same write */
    int change; /* enum db_change_kind */
};
/* A db__write() (db__write_noted() if ins->noted) of ins with row's
 * fields, setting row's key: db__step_done()'s codes. */
int db__insert_row(struct db *db, const struct db__insert *ins, void *row);
/* A reader of a row's first column into the int64_t at out. */
int db__read_int64(struct db__stmt *st, void *out);
/* A time-ordered RFC 9562 version 7 UUID (37 bytes with the terminator). */
void db__uuid(char out[DB_ID_LEN]);
/* Inside db_workload_respec's write, before the workload takes u's spec:
 * stores its first revision if none is, ends the one in force and adds
 * u's as the next (revisions.c). */
int db__revision_next(struct db__conn *c, const struct db_wl_respec *u);
int64_t db__now_ms(void);

/* SQLite: the data version of the connection's main database in its
 * current read transaction (SQLITE_FCNTL_DATA_VERSION: it moves with
 * every commit to the file, by any connection or process), DB_OK;
 * DB_EINVAL on PostgreSQL, which has none. */
int db__data_version(struct db__conn *c, uint32_t *v);
/* A reader's last page of workloads (workloads.c), freed with the
 * connection (db__page_memo_free, NULL a no-op). */
struct db__page_memo;
struct db__page_memo **db__page_memo_slot(struct db__conn *c);
void db__page_memo_free(struct db__page_memo *m);
/* Makes room for one more element in a malloc'd array of *n elements
 * with capacity *cap (doubling); DB_ENOMEM leaves the array as it was. */
/* The monotonic clock in microseconds (for the writer's turns). */
int64_t db__mono_us(void);
/* The calling thread's CPU time (what it ran, not what it waited for a core). */
int64_t db__thread_cpu_us(void);
int db__grow(void *arrp, int n, int *cap, size_t elem);
/* A growing NUL-terminated text ({0} is empty); a failed allocation
 * sets `failed`, after which adding does nothing. The caller frees s. */
struct db__text {
    char *s;
    size_t n, cap;
    int failed;
};
void db__text_add(struct db__text *t, const char *s, size_t n);
/* Values into a JSON array built in a db__text (the rows of a set-based
 * statement): ",N" (lead 0: no comma, a row's first value), and ,"text"
 * as a JSON string (NULL: ""; bytes from 0x80 pass through). */
void db__json_int(struct db__text *b, int lead, int64_t v);
void db__json_str(struct db__text *b, const char *s);
/* db__read() of a list that fn fills at *arrp (a T **, as for db__grow)
 * and *n: both start empty, and a failed read frees and empties them. */
int db__read_list(struct db *db, db__fn fn, void *arg, void *arrp, int *n);
/* Whole-table reads (org.c) appended to a malloc'd array, oldest first;
 * for the snapshot and the list calls. */
int db__pools(struct db__conn *c, struct db_pool **out, int *n);
int db__nodes(struct db__conn *c, int with_alloc, struct db_node **out, int *n);
int db__queues(struct db__conn *c, int kind, struct db_queue **out, int *n);
/* The seq and id of node `name` (org.c): DB_OK, DB_ENOTFOUND or DB_EIO. */
int db__node_key(struct db__conn *c, const char *name, int64_t *seq, char id[DB_ID_LEN]);
/* Appends a workload event inside the caller's write (workloads.c). */
int db__event_in_pool(struct db__conn *c, int64_t wl_seq, int64_t now_ms, const char *type,
                      const char *reason, const char *message, int64_t pool_seq);
int db__event(struct db__conn *c, int64_t wl_seq, int64_t now_ms, const char *type,
              const char *reason, const char *message);
/* Restarts (restarts.c): inside a heartbeat's write, whether pod idx of
 * the workload, whose run just ended (failed: with a non-zero code or a
 * signal; else with 0), is restarted as the workload's restartPolicy and
 * backoffLimit say; why: what happened, for the event. *restarted is 1
 * when it was (new uids, an event); when a failure is not for want of
 * retries left, limit_note says so ("; backoffLimit 6 reached"). A pod
 * whose command could not be run at all (never_ran) is not retried: the
 * same spec would fail the same way. */
int db__pod_restart(struct db__conn *c, int64_t wl_seq, int idx, const char *why, int failed,
                    int never_ran, int64_t now, int *restarted, char *limit_note, size_t len);
/* Is pod idx the launcher of an MPI workload (a distributed workload of
 * framework MPI with a master, pod 0)? Its end is the workload's: its
 * workers run the launcher's exec endpoint and never end by themselves. */
int db__mpi_launcher(struct db__conn *c, int64_t wl_seq, int idx, int *yes);
/* Deletion (workloads.c): a deleted workload none of whose pod runs is
 * open any more is done (Deleting -> Stopped, event Deleted); the second
 * finishes every such workload. */
int db__deletion_finish(struct db__conn *c, int64_t seq, int64_t now);
int db__deletions_finish(struct db__conn *c, int64_t now);
/* Removes the deleted workloads done being deleted before `before`, of one
 * project (0: any), with every row about them; their seqs go to *seqs
 * (grown, may be NULL). */
int db__workloads_purge(struct db__conn *c, int64_t before, int64_t project_seq, int64_t **seqs,
                        int *n);
/* A running pod's GPU figures inside a heartbeat's write (gpu_usage.c):
 * the pod's binding, for its events and to tell the devices it was given. */
struct db_pod_report;
struct db_pod_gpu_ctx {
    int64_t wl_seq;
    char wl_name[DB_NAME_LEN];
    int idx;
    uint64_t given;               /* the binding's devices */
    const char *node;
    int64_t now_ms;
};
int db__pod_gpu_record(struct db__conn *c, const struct db_pod_gpu_ctx *x,
                       const struct db_pod_report *p);
/* Forgets a run's figures (its end). */
int db__pod_gpu_forget(struct db__conn *c, const char *uid);
/* Applies pending migrations (schema.c); db_open() calls it once. */
int db__migrate(struct db__conn *c);
/* Migration 90 (checks.c): CHECK constraints, by rebuilding tables. */
int db__add_checks(struct db__conn *c);
/* Migration 153 (checks.c): on PostgreSQL, a table's CHECKs as one call of
 * a function (planned once per statement instead of each); SQLite: none. */
int db__fold_checks(struct db__conn *c);
/* Migration 390 (checks.c): on SQLite, each CHECK's `x IN (list)` of
 * three constants or more as (x = c1 OR ...), the tables rebuilt;
 * PostgreSQL: none. */
int db__flatten_checks(struct db__conn *c);
/* The rewrite of one statement (malloc'd; NULL: out of memory); *changed
 * whether a list was rewritten. */
char *db__in_lists_flattened(const char *sql, int *changed);
/* Whether the database holds a schema at all (PRAGMA user_version > 0). */
int db__has_schema(struct db__conn *c, int *has);

/* ---- the database's files (file.c) ---- */
#define DB__PATH_MAX 1024

/* Which file a path named when it was opened. */
struct db__file_id {
    uint64_t dev, ino;
    unsigned mode;                /* permission bits */
};

/* Takes the exclusive lock on PATH.lock (without waiting); *fd holds it.
 * DB_EBUSY (with a message naming the holder) if another process has it. */
int db__lock(const char *path, int *fd);
/* Drops the lock; fd < 0 is a no-op. */
void db__unlock(int fd);
int db__exists(const char *path);
/* Creates an empty file with mode 0600; DB_ECONFLICT if it exists. */
int db__create(const char *path);
/* Removes a database and its -wal, -shm and -journal files. */
int db__remove(const char *path);
/* DB_EGONE if the path names no file. */
int db__file_id(const char *path, struct db__file_id *out);
/* Could this process open the file for writing now? DB_OK, DB_EREADONLY
 * (mode, immutable, read-only file system) or DB_EGONE. */
int db__file_writable(const char *path);
/* The same for the database and those of its companions that exist. */
int db__files_writable(const char *path);
/* Free space on the file system holding the path, for this process;
 * -1 if unknown. */
int64_t db__free_bytes(const char *path);
/* Does the path still name that file? */
int db__file_same(const char *path, const struct db__file_id *id);

/* ---- test-only fault points (fault.c) ---- */
/* Reads ALLOT_FAULT once; db_open() calls it before starting threads. */
void db__fault_init(void);
/* Counts one pass of `point`; the pass named by ALLOT_FAULT kills the
 * process at once (fault.c). */
void db__fault(const char *point);
/* Counts one pass of a point inside a write (writer thread): the armed
 * pass kills the process once the commit holding it is on disk. */
void db__fault_note(const char *point);
/* The writer's commit reached the disk: the "commit" point, and any noted
 * point due. */
void db__fault_commit(void);

/* Milli-GPU one pod of workload alias W holds on node alias N (the core's
 * sched_pod_gpu()): whole devices 1000 each; shared devices (gpu_devices,
 * at least 1) the portion each, or for a GPU-memory request the fraction
 * of the device's memory, rounded up, at most 1000. */
#define DB_POD_GPU_ON(W, N)                                                             \
    "(CASE WHEN " W ".gpu_memory_mib > 0 THEN max(1, " W ".gpu_devices) * min(1000, ("   \
    W ".gpu_memory_mib * 1000 + max(" N ".gpu_memory_mib, 1) - 1) / max(" N               \
    ".gpu_memory_mib, 1)) WHEN " W ".gpu_portion > 0 THEN max(1, " W ".gpu_devices) * "   \
    W ".gpu_portion ELSE " W ".gpu_devices * 1000 END)"
/* The same before placement: a GPU-memory request at the charge of the
 * largest device memory any node reports. */
#define DB_POD_GPU_ASKED(W)                                                              \
    "(CASE WHEN " W ".gpu_memory_mib > 0 THEN max(1, " W ".gpu_devices) * min(1000, ("   \
    W ".gpu_memory_mib * 1000 + coalesce((SELECT max(gpu_memory_mib) FROM nodes), 0) - 1)" \
    " / max(coalesce((SELECT max(gpu_memory_mib) FROM nodes), 0), 1)) WHEN " W            \
    ".gpu_portion > 0 THEN max(1, " W ".gpu_devices) * " W ".gpu_portion ELSE " W          \
    ".gpu_devices * 1000 END)"

#endif /* ALLOT_DB_INT_H */
