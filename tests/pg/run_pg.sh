#!/bin/sh
# run_pg.sh CMD [ARGS...]: runs CMD against a throwaway PostgreSQL
# (pg_lib.sh), with PG_URI and ALLOT_TEST_DB_URI naming its database;
# the server is stopped and removed when CMD ends, whatever its status.
set -eu
. "$(dirname "$0")/pg_lib.sh"
pg_start
ALLOT_TEST_DB_URI=$PG_URI
export ALLOT_TEST_DB_URI
rc=0
"$@" || rc=$?
exit "$rc"
