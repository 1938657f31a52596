/*
 * db_reports.h: Run:ai's reports (/api/v1/org-unit/reports), reports.c:
 * a request (name, time range, grouping, filters) and the CSV file built
 * from it.
 */
#ifndef ALLOT_DB_REPORTS_H
#define ALLOT_DB_REPORTS_H

#include "db.h"

struct db_report {
    int64_t seq;
    char id[DB_ID_LEN];
    char name[DB_NAME_LEN];
    char description[DB_MSG_LEN];
    int64_t start_ms, end_ms;
    char group_by[16];            /* Nodepool | Project | Department | Cluster; "" none */
    char filter_by[1024];         /* JSON array of "field==value" */
    int64_t created_at;
    char created_by[DB_NAME_LEN];
    char status[16];              /* Pending | Processing | Ready | Failed */
    int64_t status_updated_at;
    char status_message[DB_MSG_LEN];
    char *csv;                    /* malloc'd; "" until Ready */
};

/* Inserts r (every field but seq set by the caller); fills seq. */
int db_report_insert(struct db *db, struct db_report *r);
/* Every report, oldest first, without their files (csv NULL); malloc'd. */
int db_report_list(struct db *db, struct db_report **out, int *n);
/* The report of that id with its file; DB_ENOTFOUND if none. */
int db_report_get(struct db *db, const char *id, struct db_report *out);
int db_report_delete(struct db *db, const char *id);
void db_reports_free(struct db_report *r, int n);

#endif
