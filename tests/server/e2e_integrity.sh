#!/bin/sh
# e2e_integrity.sh: a database file in a bad state stops allotd at start,
# before it serves or writes anything: status 1 and, on stderr, "integrity
# check of PATH failed (WHAT); refusing to start". The check (db.c, "the
# integrity check at start") splits SQLite's quick_check over two
# connections, the workloads table's CHECK constraints on one and the rest
# on the other; each case below hits one part, and the file they were
# copied from starts and serves its rows.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --simulate-nodes 1x2
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"team-a","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":2}}]}' "$ADMIN" | jq -r .id)
for i in 1 2 3 4 5 6; do
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"w$i\",\"projectId\":\"$P\",
    \"spec\":{\"image\":\"x\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
done
stop

# copy NAME: the database with its key files as $T/NAME/allot.db
copy() {
  mkdir "$T/$1"
  for f in "$T"/allot.db "$T"/allot.db.*key; do cp -p "$f" "$T/$1/"; done
}

# refused NAME WHAT: allotd on NAME's copy exits 1 at once, saying WHAT
refused() {
  rm -f "$T/$1/port"
  rc=0
  (cd "$T/$1" && exec timeout $((20 * SCALE)) "$ALLOTD" --db allot.db --listen 127.0.0.1:0 \
    --port-file port >out 2>err) || rc=$?
  [ "$rc" = 1 ] || fail "$1: allotd exited with $rc, not 1: $(cat "$T/$1/err")"
  [ ! -e "$T/$1/port" ] || fail "$1: allotd listened on a bad file"
  grep -q "^allotd: db: integrity check of allot.db failed ($2.*); refusing to start$" "$T/$1/err" ||
    fail "$1: wanted the check's refusal naming $2, got: $(cat "$T/$1/err")"
}

# rows that break a CHECK constraint, written past SQLite's own check
# (as a tool that turns it off could): one of workloads, one of queues
copy wl-check
sqlite3 "$T/wl-check/allot.db" "PRAGMA ignore_check_constraints=ON;
  UPDATE workloads SET priority = 5000 WHERE name = 'w3'" || fail "cannot write the bad row"
refused wl-check "CHECK constraint failed in workloads"
copy queue-check
sqlite3 "$T/queue-check/allot.db" "PRAGMA ignore_check_constraints=ON;
  UPDATE queues SET kind = 7 WHERE name = 'team-a'" || fail "cannot write the bad row"
refused queue-check "CHECK constraint failed in queues"

# a damaged page: the workloads' unique index on id, a leaf page's cells
# overwritten (the b-tree's structure, checked with the constraints off)
copy page
PAGE=$(sqlite3 "$T/page/allot.db" "SELECT pageno FROM dbstat
  WHERE name = 'sqlite_autoindex_workloads_1' ORDER BY pageno LIMIT 1")
SIZE=$(sqlite3 "$T/page/allot.db" "PRAGMA page_size")
[ -n "$PAGE" ] && [ -n "$SIZE" ] || fail "cannot find the index's page"
head -c 512 /dev/zero | tr '\0' '\377' |
  dd of="$T/page/allot.db" bs=1 seek=$(((PAGE - 1) * SIZE + 8)) conv=notrunc 2>/dev/null
refused page "\*\*\* in database main \*\*\* On tree page $PAGE "

# the file they were copied from starts and serves its rows
copy clean
rm -f "$T/clean/port"
(cd "$T/clean" && exec "$ALLOTD" --db allot.db --listen 127.0.0.1:0 --port-file port \
  >>"$T/log" 2>&1) &
PID=$!
poll 20 test -s "$T/clean/port" || fail "the clean copy did not start: $(tail -n 5 "$T/log")"
URL="http://127.0.0.1:$(cat "$T/clean/port")"
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
[ "$(expect 200 GET /api/v1/workloads/count "" "$ADMIN" | jq .count)" = 6 ] ||
  fail "the clean copy does not serve its 6 workloads"
stop
echo "e2e_integrity: ok"
