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

/* Appends every statement of one column of a query, each ending in ';'. */
static int read_statements(struct db__conn *c, const char *query, const char *table,
                           struct text *out)
{
    struct db__stmt *st = NULL;
    int rc = DB_OK, src;

    if (db__prep_once(c, query, &st) != DB_OK)
        return DB_EIO;
    db__bind_static(st, 1, table);
    while (rc == DB_OK && (src = db__step(st)) == DB__ROW) {
        rc = text_str(out, db__col_text(st, 0));
        if (rc == DB_OK)
            rc = text_str(out, ";");
    }
    if (rc == DB_OK && src != DB__DONE)
        rc = src; /* a DB_E* code */
    db__finalize(st);
    return rc;
}

/* Step 2: CREATE TABLE new_T (<T's columns and constraints>, <checks>)
 * <T's options, e.g. WITHOUT ROWID>. */
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
    if (rc == DB_OK)
        rc = text_str(out, ", ");
    if (rc == DB_OK)
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

static int rebuild(struct db__conn *c, const struct checked *k)
{
    struct text own = {0}, build = {0};
    int rc = k->clamp ? db__exec(c, k->clamp) : DB_OK;

    /* Step 2 */
    if (rc == DB_OK)
        rc = read_statements(c, "SELECT sql FROM sqlite_master WHERE type = 'table'"
                                " AND name = ?", k->table, &own);
    if (rc == DB_OK && own.n == 0) {
        fprintf(stderr, "allotd: db: no table %s to constrain\n", k->table);
        rc = DB_EIO;
    }
    if (rc == DB_OK) {
        own.s[own.n - 1] = 0; /* the ';' read_statements added */
        rc = new_table_sql(k->table, own.s, k->checks, &build);
    }
    /* Steps 3 and 4 */
    if (rc == DB_OK)
        rc = move_rows(k->table, &build);
    if (rc == DB_OK)
        rc = read_statements(c, "SELECT sql FROM sqlite_master WHERE tbl_name = ?"
                                " AND type IN ('index', 'trigger') AND sql IS NOT NULL"
                                " ORDER BY type, name", k->table, &build);
    if (rc == DB_OK)
        rc = db__exec(c, build.s);
    free(own.s);
    free(build.s);
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
