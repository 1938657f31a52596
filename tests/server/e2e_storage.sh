#!/bin/sh
# e2e_storage.sh: what allotd does when its database file is shared,
# missing, removed, locked or read-only.
#   one database, one server: a second allotd on it refuses to start and
#     names the first; a second --demo in the same directory refuses too
#     and leaves the first one's database alone;
#   no implicit database: without --init, a missing or empty file is an
#     error (exit 2) and nothing is created; --init creates it 0600 (its
#     -wal and -shm too) and refuses to overwrite; the log line names
#     synchronous=FULL as SQLite reports it;
#   a removed database: writes answer 503 (nothing acknowledged), /readyz
#     503 with the reason, and a restart refuses to create a new one;
#   a database locked by another process (sqlite3 holding a write lock):
#     refused at start after the busy wait; at run time writes answer 503,
#     /readyz says why, and both recover by themselves once it lets go;
#   a read-only database file: refused at start; made read-only while
#     running, writes answer 503 while reads work, and they recover once
#     it is writable again; made unreadable while running, reads that
#     open a new connection answer 503, never 500.
# The busy waits make it take about 15 s.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

TOKEN="" SQLITE="" DEMO=""
test_kill() { # on the way out: nothing of the test left running
  for p in $SQLITE $DEMO; do kill -9 "$p" 2>/dev/null || true; done
}
login_admin() { TOKEN=$(login admin "$ALLOT_ADMIN_PASSWORD"); }
project() { # NAME: creates a project, prints the whole reply and status
  req POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"resources\":[{\"nodePool\":
    {\"name\":\"default\"},\"gpu\":{\"deserved\":1}}]}" "$TOKEN"
}
status_of() { printf '%s\n' "$1" | tail -n 1; }
# refused WANT_STATUS LOG allotd-options...: allotd exits with that status
refused() {
  want=$1 log=$2
  shift 2
  set +e
  (cd "$T" && ${RUN_AS:-} "$ALLOTD" --listen 127.0.0.1:0 "$@" >"$log" 2>&1)
  got=$?
  set -e
  [ "$got" = "$want" ] || fail "allotd $*: exit $got, wanted $want: $(cat "$log")"
  sanitizer_free "$log"
}
is_ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ]; }
# ready_within SECONDS: /readyz answers 200 before the deadline
ready_within() {
  poll "$1" is_ready || fail "/readyz is not 200 after $1 s: $(curl -s "$URL/readyz")"
}
mode() { stat -c %a "$1"; }
# unavailable OUT REASON WHAT: the reply OUT is a 503 that says REASON
unavailable() {
  [ "$(status_of "$1")" = 503 ] && printf '%s\n' "$1" | grep -q "$2" || fail "$3: $1"
}
# writes_refused PROJECT REASON WHEN KNOWN: a write (creating PROJECT) and
# /readyz get a 503 that says REASON, and reads go on (project KNOWN is
# listed); WHEN names the state in failures.
writes_refused() {
  unavailable "$(project "$1")" "$2" "a write $3"
  unavailable "$(req GET /readyz)" "$2" "/readyz $3"
  expect 200 GET /api/v1/org-unit/projects "" "$TOKEN" | grep -q "\"$4\"" || fail "reads fail $3"
}
# writes_back PROJECT WHEN: ready again within 60 s, and creating PROJECT works
writes_back() {
  ready_within 60
  [ "$(status_of "$(project "$1")")" = 201 ] || fail "writes did not come back $2"
}

# --- no implicit database -------------------------------------------------
refused 2 "$T/missing.log" --db "$T/none.db"
grep -q "no database at $T/none.db: create one with allotd --init" "$T/missing.log" ||
  fail "no reason given for a missing database: $(cat "$T/missing.log")"
[ ! -e "$T/none.db" ] || fail "allotd created a database without --init"
: >"$T/empty.db"
refused 2 "$T/empty.log" --db "$T/empty.db"
grep -q "holds no allot database" "$T/empty.log" || fail "an empty file was taken: $(cat "$T/empty.log")"
(cd "$T" && "$ALLOTD" --init --db "$T/a.db" >"$T/init.log" 2>&1) || fail "--init: $(cat "$T/init.log")"
grep -q "created the database $T/a.db (SQLite [0-9.]*, journal_mode=wal, synchronous=FULL)" \
  "$T/init.log" || fail "--init does not report WAL and synchronous=FULL: $(cat "$T/init.log")"
[ "$(mode "$T/a.db")" = 600 ] || fail "a new database has mode $(mode "$T/a.db"), not 600"
refused 2 "$T/again.log" --init --db "$T/a.db"
grep -q "a database exists already at $T/a.db" "$T/again.log" || fail "--init overwrote: $(cat "$T/again.log")"

# --- one server per database ----------------------------------------------
start --db "$T/a.db"
grep -q "database $T/a.db (SQLite [0-9.]*, journal_mode=wal, synchronous=FULL)" "$T/log" ||
  fail "the start line does not say synchronous=FULL"
login_admin
expect 201 POST /api/v1/org-unit/projects '{"name":"p1","resources":[]}' "$TOKEN" >/dev/null
for f in a.db-wal a.db-shm; do
  [ "$(mode "$T/$f")" = 600 ] || fail "$f has mode $(mode "$T/$f"), not 600"
done
refused 1 "$T/second.log" --db "$T/a.db"
grep -q "the database $T/a.db is in use by another allotd (pid $PID)" "$T/second.log" ||
  fail "a second allotd on one database: $(cat "$T/second.log")"

# --- the database removed while it runs ------------------------------------
mv "$T/a.db" "$T/a.db.moved"
out=$(project p2)
[ "$(status_of "$out")" = 503 ] || fail "a write after the file was removed: $out"
printf '%s\n' "$out" | grep -q "was removed or replaced while allotd was running" ||
  fail "the 503 does not say why: $out"
unavailable "$(req GET /readyz)" "removed or replaced" "/readyz after the file was removed"
stop
refused 2 "$T/gone.log" --db "$T/a.db"
[ ! -e "$T/a.db" ] || fail "a restart created a new database in place of the removed one"
mv "$T/a.db.moved" "$T/a.db"
rm -f "$T/a.db-wal" "$T/a.db-shm"
sqlite3 "$T/a.db" "SELECT count(*) FROM queues WHERE name = 'p2'" | grep -qx 0 ||
  fail "the refused write is in the database"

# --- a second --demo in one directory --------------------------------------
mkdir "$T/demo"
(cd "$T/demo" && exec "$ALLOTD" --demo --listen 127.0.0.1:0 --port-file "$T/demo/port" \
  >"$T/demo/log" 2>&1) &
DEMO=$!
poll 20 test -s "$T/demo/port" || fail "the demo did not start: $(cat "$T/demo/log")"
DURL="http://127.0.0.1:$(cat "$T/demo/port")"
DTOK=$(curl -s -X POST "$DURL/api/v1/token" -H 'Content-Type: application/json' \
  -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
  jq -r .accessToken)
curl -s -o /dev/null -X POST "$DURL/api/v1/org-unit/projects" -H "Authorization: Bearer $DTOK" \
  -H 'Content-Type: application/json' -d '{"name":"kept","resources":[]}'
set +e
(cd "$T/demo" && "$ALLOTD" --demo --listen 127.0.0.1:0 >"$T/demo2.log" 2>&1)
got=$?
set -e
[ "$got" = 1 ] || fail "a second --demo: exit $got: $(cat "$T/demo2.log")"
sanitizer_free "$T/demo2.log"
grep -q "in use by another allotd (pid $DEMO)" "$T/demo2.log" || fail "second --demo: $(cat "$T/demo2.log")"
curl -s "$DURL/api/v1/org-unit/projects" -H "Authorization: Bearer $DTOK" | grep -q '"kept"' ||
  fail "the second --demo removed the first one's database"
stop_pid "$DEMO" "the demo allotd" "$T/demo/log"
DEMO=""

# --- locked by another process ----------------------------------------------
mkfifo "$T/sql"
# the log exists before sqlite3 opens it: its shell opens the fifo first,
# which waits for the writer below, and lock() reads the log at once after
: >"$T/sqlite.log"
sqlite3 "$T/a.db" <"$T/sql" >>"$T/sqlite.log" 2>&1 &
SQLITE=$!
exec 3>"$T/sql"
# sqlite3 waits for the lock as long as it takes (allotd's own writes, its
# lease renewals among them, hold it now and then, longer on a loaded
# machine), and stops at its first error rather than printing 'held' after
# a BEGIN that failed
printf '.timeout 60000\n.bail on\n' >&3
unlock() { printf 'ROLLBACK;\n' >&3; }
lock() { # takes the write lock and waits until sqlite3 says it holds it
  n=$(grep -c held "$T/sqlite.log" || true)
  printf "BEGIN IMMEDIATE;\nINSERT OR REPLACE INTO write_probe VALUES (1, 0);\nSELECT 'held';\n" >&3
  poll 60 sh -c "[ \"\$(grep -c held '$T/sqlite.log')\" -gt $n ]" ||
    fail "sqlite3 did not take the lock: $(cat "$T/sqlite.log")"
}
lock
refused 1 "$T/locked.log" --db "$T/a.db" 3>&-
grep -q "is locked by another process" "$T/locked.log" || fail "start on a locked database: $(cat "$T/locked.log")"
unlock
start --db "$T/a.db" 3>&-
login_admin
lock
writes_refused p3 "locked by another process" "while locked" p1
unlock
printf '.exit\n' >&3
exec 3>&-
wait "$SQLITE" || fail "sqlite3 failed: $(cat "$T/sqlite.log")"
SQLITE=""
writes_back p3 "after the lock went"
stop

# --- read-only -------------------------------------------------------------
# File modes bind root only through another user: as root, allotd runs as
# nobody here.
mkdir "$T/ro"
cp "$T/a.db" "$T/ro/a.db"
cp "$T/a.db.key" "$T/ro/a.db.key"
if [ "$(id -u)" = 0 ]; then
  RUN_AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
  chown -R 65534:65534 "$T/ro"
  chown 65534 "$T"
fi
chmod 0400 "$T/ro/a.db"
refused 1 "$T/ro.log" --db "$T/ro/a.db"
grep -q "the database $T/ro/a.db is read-only" "$T/ro.log" || fail "start read-only: $(cat "$T/ro.log")"
chmod 0600 "$T/ro/a.db"
# (no rate limits: the burst of reads below must reach the database)
start --db "$T/ro/a.db" --rate-limit 0 --user-rate-limit 0
login_admin
chmod 0400 "$T/ro/a.db"
writes_refused p4 "is read-only" "read-only" p3
chmod 0600 "$T/ro/a.db"
writes_back p4 "once writable"
# ---- reads while the database file is unreadable answer 503, not 500 ----
# (those that need a new reader connection: many at once open more)
chmod 0000 "$T/ro/a.db"
CURLS=""
for i in $(seq 1 300); do
  curl -s -o /dev/null -w '%{http_code}\n' "$URL/api/v1/org-unit/projects" \
    -H "Authorization: Bearer $TOKEN" >>"$T/codes" &
  CURLS="$CURLS $!"
done
wait $CURLS
chmod 0600 "$T/ro/a.db"
if grep -qv '^\(200\|503\)$' "$T/codes"; then
  fail "reads of an unreadable database: $(sort "$T/codes" | uniq -c | tr '\n' ' ')"
fi
writes_back p5 "once readable"
stop
RUN_AS=""
[ "$(sqlite3 "$T/ro/a.db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check failed"
[ "$(sqlite3 "$T/ro/a.db" "SELECT count(*) FROM queues WHERE name IN ('p1', 'p3', 'p4')")" = 3 ] ||
  fail "an acknowledged project is missing"
echo "e2e_storage: ok"
