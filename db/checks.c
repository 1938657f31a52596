/*
 * checks.c: migration 90, CHECK constraints on every quantity, flag and
 * state of the schema.
 *
 * SQLite cannot add a constraint to an existing table, so each table of
 * the list below is rebuilt (the procedure of SQLite's ALTER TABLE page):
 *   Step 1: rows stored before the constraints with a quantity out of
 *           range are clamped into range (a memory request parsed from
 *           "nan" was stored as the smallest int64; 0 is what it meant);
 *   Step 2: the new table's statement is the table's own, as SQLite keeps
 *           it (with every column any migration added), renamed new_T,
 *           with the table's constraints appended;
 *   Step 3: the rows are copied (same columns, same order), the
 *           AUTOINCREMENT counter carried over so no id is ever reused;
 *   Step 4: the table's indexes and triggers are read, the old table
 *           dropped, the new one renamed, the indexes and triggers made
 *           again from their own statements.
 * Reading the table's statement instead of spelling its columns here
 * keeps every column added by an earlier migration, whoever wrote it.
 *
 * Runs inside apply_later()'s transaction with foreign keys off (SQLite's
 * procedure requires it: dropping a table others refer to); the caller
 * checks them before committing.
 *
 * On PostgreSQL the table keeps its place: after step 1, one ALTER TABLE
 * adds the constraints (ADD CHECK for each); there is no rebuild to do.
 *
 * Migration 153 (db__fold_checks, PostgreSQL only; nothing on SQLite):
 * PostgreSQL reads every CHECK of a table back from its stored node tree
 * and plans it again at each statement that writes a row (ExecConstraints:
 * 17 KB of node text for the 25 of workloads, about 150 us a statement,
 * six times the insert itself). So each table with two CHECKs or more
 * gets one instead: a call of allot_<table>_ok(the columns they read), an
 * IMMUTABLE PL/pgSQL function whose body is their conjunction, as the
 * catalog states them (pg_get_constraintdef), so no guarantee changes; a
 * violation is still SQLSTATE 23514 (DB_EINVAL), naming <table>_ok. A
 * later migration that drops or retypes a column one of them reads must
 * fold that table again (PostgreSQL drops a constraint with a column it
 * reads).
 *
 * Bounds: quantities (GPU milli-units, CPU millicores, memory MiB) lie in
 * 0..Q with Q = 2^40, or -1..Q where -1 means unlimited (quotas) or plenty
 * (nodes); flags are 0 or 1; phases and kinds are the sets the code
 * writes.
 */
#include "arrays.h"
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Q "1099511627776"
#define QTY(c) "CHECK (" c " BETWEEN 0 AND " Q ")"
#define QTY_OR_NONE(c) "CHECK (" c " BETWEEN -1 AND " Q ")"
#define FLAG(c) "CHECK (" c " IN (0, 1))"
#define TIME(c) "CHECK (" c " >= 0)"
#define CLAMP(c, lo) c " = min(max(" c ", " lo "), " Q ")"

struct checked {
    const char *table;
    const char *clamp;            /* an UPDATE run first; NULL none */
    const char *checks;           /* table constraints, comma-separated */
};

static const struct checked tables[] = {
    {"users", NULL,
     "CHECK (login != ''), CHECK (token_version >= 1), " TIME("created_at") ", "
     TIME("updated_at") ", " TIME("last_login")},
    {"access_rules", NULL,
     "CHECK (subject_type IN ('user', 'service-account')), CHECK (role_id BETWEEN 1 AND 1000), "
     TIME("created_at")},
    {"node_pools", NULL,
     "CHECK (name != ''), CHECK (gpu_placement BETWEEN 0 AND 2), "
     "CHECK (cpu_placement BETWEEN 0 AND 2), " TIME("min_runtime_ms") ", " FLAG("tbf_enabled")
     ", CHECK (tbf_window_ms > 0), " TIME("tbf_half_life_ms") ", " QTY("tbf_k_milli") ", "
     TIME("created_at") ", " TIME("updated_at")},
    {"nodes",
     "UPDATE nodes SET " CLAMP("cpu_milli", "-1") ", " CLAMP("mem_mib", "-1") ", "
     CLAMP("gpu_memory_mib", "0"),
     "CHECK (name != ''), " QTY_OR_NONE("cpu_milli") ", " QTY_OR_NONE("mem_mib") ", "
     QTY("gpu_memory_mib") ", " FLAG("ready") ", " FLAG("simulated") ", " FLAG("pool_pinned")
     ", " TIME("created_at") ", " TIME("updated_at")},
    {"queues", NULL,
     "CHECK (name != ''), CHECK (parent_seq IS NULL OR parent_seq != seq), "
     "CHECK (rank BETWEEN -1000 AND 1000), " TIME("created_at") ", " TIME("updated_at")},
    {"queue_quotas",
     "UPDATE queue_quotas SET " CLAMP("gpu_deserved", "-1") ", " CLAMP("gpu_limit", "-1") ", "
     CLAMP("gpu_weight", "0") ", " CLAMP("cpu_deserved", "-1") ", " CLAMP("cpu_limit", "-1") ", "
     CLAMP("cpu_weight", "0") ", " CLAMP("mem_deserved", "-1") ", " CLAMP("mem_limit", "-1") ", "
     CLAMP("mem_weight", "0"),
     QTY_OR_NONE("gpu_deserved") ", " QTY_OR_NONE("gpu_limit") ", " QTY("gpu_weight") ", "
     QTY_OR_NONE("cpu_deserved") ", " QTY_OR_NONE("cpu_limit") ", " QTY("cpu_weight") ", "
     QTY_OR_NONE("mem_deserved") ", " QTY_OR_NONE("mem_limit") ", " QTY("mem_weight") ", "
     "CHECK (priority BETWEEN 0 AND 3)"},
    {"workloads",
     "UPDATE workloads SET " CLAMP("cpu_milli", "0") ", " CLAMP("mem_mib", "0") ", "
     CLAMP("gpu_memory_mib", "0"),
     "CHECK (name != ''), CHECK (priority BETWEEN 0 AND 1000), " FLAG("preemptible") ", "
     "CHECK (desired_phase IN ('Running', 'Stopped', 'Deleted')), "
     "CHECK (phase IN ('Creating', 'Initializing', 'Resuming', 'Pending', 'Deleting', 'Running',"
     " 'Updating', 'Stopped', 'Stopping', 'Degraded', 'Failed', 'Completed', 'Terminating',"
     " 'Unknown')), "
     "CHECK (n_pods BETWEEN 1 AND 100000), CHECK (gpu_devices BETWEEN 0 AND 64), "
     QTY("cpu_milli") ", " QTY("mem_mib") ", " QTY("gpu_memory_mib") ", CHECK (queued_seq >= 0), " TIME("started_ms") ", "
     TIME("stale_since_ms") ", " TIME("created_at") ", " TIME("updated_at") ", "
     TIME("phase_updated_at") ", " TIME("deleted_at") ", " TIME("completed_at") ", "
     "CHECK (version >= 1)"},
    {"pods", NULL, "CHECK (idx BETWEEN 0 AND 99999)"},
    {"events", NULL, "CHECK (type IN ('Normal', 'Warning')), " TIME("created_at")},
    {"samples",
     "UPDATE samples SET " CLAMP("gpu_alloc", "0") ", " CLAMP("gpu_quota", "-1") ", "
     CLAMP("cpu_alloc", "0") ", " CLAMP("cpu_quota", "-1") ", " CLAMP("mem_alloc", "0") ", "
     CLAMP("mem_quota", "-1"),
     TIME("ts") ", " QTY("gpu_alloc") ", " QTY_OR_NONE("gpu_quota") ", " QTY("cpu_alloc") ", "
     QTY_OR_NONE("cpu_quota") ", " QTY("mem_alloc") ", " QTY_OR_NONE("mem_quota")},
    {"pod_runs", NULL,
     "CHECK (idx BETWEEN 0 AND 99999), " TIME("started_at") ", " TIME("finished_at") ", "
     "CHECK (exit_code BETWEEN -1 AND 255), CHECK (signal BETWEEN 0 AND 64), "
     "CHECK (outcome IN ('', 'Succeeded', 'Failed', 'Stopped', 'Lost'))"},
    {"gpu_idle", NULL, "CHECK (idx BETWEEN 0 AND 63), " TIME("idle_since")},
};

/* A growing string for the statements built here. */
struct text {
    char *s;
    size_t n, cap;
};

static int text_add(struct text *t, const char *s, size_t len)
{
    return text_append(&t->s, &t->n, &t->cap, 1024, s, len) == 0 ? DB_OK : DB_ENOMEM;
}

static int text_str(struct text *t, const char *s)
{
    return text_add(t, s, strlen(s));
}

/* Appends the text of every row of a one-column query (its parameter
 * `arg`), each followed by `end`: ';' for statements, a NUL for names. */
static int read_texts(struct db__conn *c, const char *query, const char *arg, char end,
                      struct text *out)
{
    struct db__stmt *st = NULL;
    int rc = DB_OK, src;

    if (db__prep_once(c, query, &st) != DB_OK)
        return DB_EIO;
    db__bind_static(st, 1, arg);
    while (rc == DB_OK && (src = db__step(st)) == DB__ROW) {
        rc = text_str(out, db__col_text(st, 0));
        if (rc == DB_OK)
            rc = text_add(out, &end, 1);
    }
    if (rc == DB_OK && src != DB__DONE)
        rc = src; /* a DB_E* code */
    db__finalize(st);
    return rc;
}

/* Step 2: CREATE TABLE new_T (<T's columns and constraints>, <checks>)
 * <T's options, e.g. WITHOUT ROWID>; checks NULL: none appended. */
static int new_table_sql(const char *table, const char *own, const char *checks,
                         struct text *out)
{
    const char *open = strchr(own, '('), *close = strrchr(own, ')');
    int rc;

    if (!open || !close || close < open) {
        fprintf(stderr, "allotd: db: cannot read the definition of %s\n", table);
        return DB_EIO;
    }
    rc = text_str(out, "CREATE TABLE new_");
    if (rc == DB_OK)
        rc = text_str(out, table);
    if (rc == DB_OK)
        rc = text_add(out, open, (size_t)(close - open));
    if (rc == DB_OK && checks)
        rc = text_str(out, ", ");
    if (rc == DB_OK && checks)
        rc = text_str(out, checks);
    if (rc == DB_OK)
        rc = text_str(out, close);
    if (rc == DB_OK)
        rc = text_str(out, ";");
    return rc;
}

/* Step 3 and the drop and rename of step 4. */
static int move_rows(const char *t, struct text *out)
{
    char sql[1024];

    snprintf(sql, sizeof(sql),
             "INSERT INTO new_%s SELECT * FROM %s;"
             "DELETE FROM sqlite_sequence WHERE name = 'new_%s';"
             "INSERT INTO sqlite_sequence (name, seq)"
             " SELECT 'new_%s', seq FROM sqlite_sequence WHERE name = '%s';"
             "DROP TABLE %s;"
             "ALTER TABLE new_%s RENAME TO %s;",
             t, t, t, t, t, t, t, t);
    return text_str(out, sql);
}

/* The table's statement as SQLite keeps it, in *own (NUL-terminated). */
static int read_table_sql(struct db__conn *c, const char *table, struct text *own)
{
    int rc = read_texts(c, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                        table, ';', own);

    if (rc == DB_OK && own->n == 0) {
        fprintf(stderr, "allotd: db: no table %s to rebuild\n", table);
        rc = DB_EIO;
    }
    if (rc == DB_OK)
        own->s[own->n - 1] = 0; /* the ';' read_texts added */
    return rc;
}

/* Steps 2-4 for a table whose new statement is own's, checks appended
 * (NULL: none). */
static int rebuild_as(struct db__conn *c, const char *table, const char *own,
                      const char *checks)
{
    struct text build = {0};
    int rc = new_table_sql(table, own, checks, &build);

    if (rc == DB_OK)
        rc = move_rows(table, &build);
    if (rc == DB_OK)
        rc = read_texts(c, "SELECT sql FROM sqlite_master WHERE tbl_name = ?"
                           " AND type IN ('index', 'trigger') AND sql IS NOT NULL"
                           " ORDER BY type, name", table, ';', &build);
    if (rc == DB_OK)
        rc = db__exec(c, build.s);
    free(build.s);
    return rc;
}

static int rebuild(struct db__conn *c, const struct checked *k)
{
    struct text own = {0};
    int rc = k->clamp ? db__exec(c, k->clamp) : DB_OK;

    if (rc == DB_OK)
        rc = read_table_sql(c, k->table, &own);
    if (rc == DB_OK)
        rc = rebuild_as(c, k->table, own.s, k->checks);
    free(own.s);
    return rc;
}

/* PostgreSQL: ALTER TABLE T ADD CHECK (...), ADD CHECK (...). */
static int add_in_place(struct db__conn *c, const struct checked *k)
{
    struct text sql = {0};
    const char *s = k->checks, *next;
    int rc = k->clamp ? db__exec(c, k->clamp) : DB_OK;

    if (rc == DB_OK)
        rc = text_str(&sql, "ALTER TABLE ");
    if (rc == DB_OK)
        rc = text_str(&sql, k->table);
    for (; rc == DB_OK && s; s = next) {
        next = strstr(s + 1, ", CHECK (");
        rc = text_str(&sql, s == k->checks ? " ADD " : ", ADD ");
        if (rc == DB_OK)
            rc = text_add(&sql, s == k->checks ? s : s + 2,
                          next ? (size_t)(next - s) - (s == k->checks ? 0 : 2)
                               : strlen(s) - (s == k->checks ? 0 : 2));
    }
    if (rc == DB_OK)
        rc = db__exec(c, sql.s);
    free(sql.s);
    return rc;
}

/* Migration 153, in one DO block: per table with two CHECKs or more, the
 * columns they read (in table order), their conjunction, then the
 * function and the one constraint calling it in place of them. */
static const char fold[] =
    "DO $fold$ DECLARE t text; args text; cols text; body text; drops text; BEGIN"
    " FOR t IN SELECT c.relname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid"
    "  JOIN pg_namespace n ON n.oid = c.relnamespace"
    "  WHERE k.contype = 'c' AND n.nspname = current_schema()"
    "  GROUP BY c.relname HAVING count(*) > 1 ORDER BY c.relname LOOP"
    "  SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, NULL), ', '"
    "   ORDER BY attnum), string_agg(quote_ident(attname), ', ' ORDER BY attnum)"
    "   INTO args, cols FROM pg_attribute WHERE attrelid = t::regclass AND attnum IN"
    "   (SELECT unnest(conkey) FROM pg_constraint WHERE conrelid = t::regclass AND contype = 'c');"
    "  SELECT string_agg(substr(pg_get_constraintdef(oid), 7), ' AND ' ORDER BY conname),"
    "   string_agg('DROP CONSTRAINT ' || quote_ident(conname), ', ' ORDER BY conname)"
    "   INTO body, drops FROM pg_constraint WHERE conrelid = t::regclass AND contype = 'c';"
    "  EXECUTE format('CREATE FUNCTION %I(%s) RETURNS boolean LANGUAGE plpgsql IMMUTABLE"
    "   AS %L', 'allot_' || t || '_ok', args, 'BEGIN RETURN ' || body || '; END');"
    "  EXECUTE format('ALTER TABLE %I %s, ADD CONSTRAINT %I CHECK (%I(%s))', t, drops,"
    "   t || '_ok', 'allot_' || t || '_ok', cols);"
    " END LOOP; END $fold$";

int db__fold_checks(struct db__conn *c)
{
    return db__is_pq(c) ? db__exec(c, fold) : DB_OK;
}

int db__add_checks(struct db__conn *c)
{
    size_t i;
    int rc = DB_OK;

    for (i = 0; rc == DB_OK && i < sizeof(tables) / sizeof(tables[0]); i++)
        rc = db__is_pq(c) ? add_in_place(c, &tables[i]) : rebuild(c, &tables[i]);
    return rc;
}

/* ---- Migration 390: the CHECKs' lists as comparisons (SQLite) ----
 * SQLite runs `x IN (c1, ..., cn)` of more than two constants outside a
 * WHERE by building a temporary index of the n constants each time the
 * expression runs: in a CHECK, at every insert of a row and every update
 * of the column (a pager opened, n rows inserted, one lookup, the pager
 * closed). workloads' phase (14 phases) and desired phase (3), and the
 * change log's kind (4), cost the writer that three times a submission.
 * Each such list becomes (x = c1 OR ... OR x = cn), which passes the same
 * rows: both compare with the column's affinity and collation, and both
 * are NULL (a pass) when x is.
 *   Step 1: the tables' names, then each table's statement as SQLite keeps
 *           it;
 *   Step 2: every `name IN (list)` of more than two constants (integers
 *           or quoted strings) in it is rewritten; `NOT IN`, a list of
 *           anything else and a table with none are left as they are;
 *   Step 3: a table with one is rebuilt from the rewritten statement
 *           (rebuild_as(): steps 2-4 of migration 90).
 * Later migrations that spell a table out write its lists as comparisons
 * (tests/server/e2e_migrate.sh fails on a list of three or more). */

#define IN_LIST_MAX 64

struct in_list {
    const char *at[IN_LIST_MAX];
    size_t len[IN_LIST_MAX];
    int n;
    const char *end;               /* past the list's ')' */
};

/* The length of the constant at s (an integer, or a string in single
 * quotes with '' inside); 0 when s holds neither. */
static size_t constant_len(const char *s)
{
    size_t n = *s == '-';

    if (*s == '\'') {
        for (n = 1; s[n]; n++)
            if (s[n] == '\'' && s[++n] != '\'')
                return n;
        return 0;
    }
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n > (size_t)(*s == '-') ? n : 0;
}

/* The list of constants at s (just past "IN ("); 0 when it is not one. */
static int read_in_list(const char *s, struct in_list *l)
{
    size_t len;

    for (l->n = 0;; s++) {
        while (*s == ' ')
            s++;
        len = constant_len(s);
        if (len == 0 || l->n == IN_LIST_MAX)
            return 0;
        l->at[l->n] = s;
        l->len[l->n++] = len;
        for (s += len; *s == ' '; s++)
            ;
        if (*s == ')') {
            l->end = s + 1;
            return 1;
        }
        if (*s != ',')
            return 0;
    }
}

static int is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '"';
}

/* (name = c1 OR name = c2 ...) in place of `name IN (c1, c2, ...)`. */
static int add_comparisons(struct text *out, const char *name, size_t name_len,
                           const struct in_list *l)
{
    int i, rc = text_str(out, "(");

    for (i = 0; rc == DB_OK && i < l->n; i++) {
        if (i > 0)
            rc = text_str(out, " OR ");
        if (rc == DB_OK)
            rc = text_add(out, name, name_len);
        if (rc == DB_OK)
            rc = text_str(out, " = ");
        if (rc == DB_OK)
            rc = text_add(out, l->at[i], l->len[i]);
    }
    return rc == DB_OK ? text_str(out, ")") : rc;
}

/* Step 2: sql with its lists of three constants or more as comparisons,
 * in out; *changed whether there was one. */
static int flatten_sql(const char *sql, struct text *out, int *changed)
{
    const char *done = sql, *in, *name;
    struct in_list l;
    int rc = DB_OK;

    *changed = 0;
    for (in = strstr(sql, " IN ("); rc == DB_OK && in; in = strstr(in + 1, " IN (")) {
        for (name = in; name > done && is_name_char(name[-1]); name--)
            ;
        if (name == in || (in - name == 3 && strncmp(name, "NOT", 3) == 0) ||
            !read_in_list(in + 5, &l) || l.n <= 2)
            continue;
        rc = text_add(out, done, (size_t)(name - done));
        if (rc == DB_OK)
            rc = add_comparisons(out, name, (size_t)(in - name), &l);
        done = l.end;
        in = l.end - 1;
        *changed = 1;
    }
    return rc == DB_OK ? text_str(out, done) : rc;
}

char *db__in_lists_flattened(const char *sql, int *changed)
{
    struct text out = {0};

    if (flatten_sql(sql, &out, changed) != DB_OK) {
        free(out.s);
        return NULL;
    }
    return out.s;
}

/* Steps 2 and 3 for one table. */
static int flatten_table(struct db__conn *c, const char *table)
{
    struct text own = {0}, flat = {0};
    int changed = 0, rc = read_table_sql(c, table, &own);

    if (rc == DB_OK)
        rc = flatten_sql(own.s, &flat, &changed);
    if (rc == DB_OK && changed)
        rc = rebuild_as(c, table, flat.s, NULL);
    free(own.s);
    free(flat.s);
    return rc;
}

int db__flatten_checks(struct db__conn *c)
{
    struct text names = {0};
    size_t at;
    /* Step 1: the tables' names, each ending in a NUL */
    int rc = db__is_pq(c) ? DB_OK
                          : read_texts(c, "SELECT name FROM sqlite_master WHERE type = ?"
                                          " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                                          " ORDER BY name", "table", 0, &names);

    for (at = 0; rc == DB_OK && at < names.n; at += strlen(names.s + at) + 1)
        rc = flatten_table(c, names.s + at);
    free(names.s);
    return rc;
}
