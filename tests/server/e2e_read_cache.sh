#!/bin/sh
# e2e_read_cache.sh: workloads read from memory on SQLite (api/readcache.c,
# docs/allotd.md "Reads from memory"), against a real allotd:
#   1. a GET of one workload repeated while nothing changed is answered
#      from memory (allot_read_cache_hits_total grows), and so is a page
#      of the list;
#   2. a write through the API shows in the very next read (suspend,
#      resume, delete);
#   3. a program writing the file directly (the sqlite3 shell) is seen
#      within --read-max-age-ms (here 300 ms; 1 s allowed);
#   4. --read-max-age-ms 0 reads the file every time (no hit).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

metric() { # NAME: its value in /metrics
  curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" | awk -v k="$1" '$1 == k { print $2 }'
}
field() { # ID KEY: the workload's KEY as GET answers it
  expect 200 GET "/api/v1/workloads/$1" "" "$ADMIN" | jq -r ".$2"
}

start_admin --db "$T/reads.db" --simulate-nodes 1x2 --read-max-age-ms 300
P=$(quota_project team-a 2 "$ADMIN")
run_trainings "$P" w1 w2
W1=$(workload_id "$ADMIN" w1)
W2=$(workload_id "$ADMIN" w2)

# ---- 1. repeated reads from memory ----
# A read between two of the scheduler's writes is answered from memory;
# a write of the scheduler's (its turn after a change) drops the entries,
# so the pair is tried again until one hits.
read_twice() { # N: the list holds N workloads
  _h=$(metric allot_read_cache_hits_total)
  [ "$(field "$W1" name)" = w1 ] || fail "w1 read as $(field "$W1" name)"
  [ "$(field "$W1" name)" = w1 ] || fail "w1 read as $(field "$W1" name)"
  [ "$(expect 200 GET "/api/v1/workloads?limit=50" "" "$ADMIN" | jq '.workloads | length')" = "$1" ] ||
    fail "the list does not hold $1 workloads"
  [ "$(expect 200 GET "/api/v1/workloads?limit=50" "" "$ADMIN" | jq '.workloads | length')" = "$1" ] ||
    fail "the list does not hold $1 workloads"
  [ "$(metric allot_read_cache_hits_total)" -ge $((_h + 2)) ]
}
poll 20 read_twice 2 || fail "repeated reads were not answered from memory"

# ---- 2. read your writes ----
[ "$(field "$W1" desiredPhase)" = Running ] || fail "w1 is not to run"
expect 202 POST "/api/v1/workloads/trainings/$W1/suspend" "" "$ADMIN" >/dev/null
[ "$(field "$W1" desiredPhase)" = Stopped ] || fail "w1's suspension does not show at once"
expect 202 POST "/api/v1/workloads/trainings/$W1/resume" "" "$ADMIN" >/dev/null
[ "$(field "$W1" desiredPhase)" = Running ] || fail "w1's resumption does not show at once"
[ "$(expect 200 GET "/api/v1/workloads?limit=50" "" "$ADMIN" | jq '.workloads | length')" = 2 ] ||
  fail "w2 not listed"
expect 202 DELETE "/api/v1/workloads/trainings/$W2" "" "$ADMIN" >/dev/null
[ "$(expect 200 GET "/api/v1/workloads?filterBy=name==w2" "" "$ADMIN" | jq '.workloads | length')" = 0 ] ||
  [ "$(phase "$ADMIN" w2)" = Deleting ] || fail "w2's deletion does not show at once"

# ---- 3. another program's write: within the bound ----
poll 20 read_twice 1 || fail "reads were not answered from memory again"
# waiting for the write lock while allotd holds it (a turn's write): the
# sqlite3 shell's busy timeout is 0, so without one it fails at once
sqlite3 -cmd ".timeout 10000" "$T/reads.db" "UPDATE workloads SET name = 'renamed' WHERE id = '$W1'" ||
  fail "the direct write failed"
T0=$(now_ms)
renamed() { [ "$(field "$W1" name)" = renamed ]; }
poll 5 renamed || fail "a direct write to the file not seen within 5 s"
[ $(($(now_ms) - T0)) -le $((1000 * SCALE)) ] ||
  fail "a direct write seen after $(($(now_ms) - T0)) ms, past --read-max-age-ms 300"
stop

# ---- 4. --read-max-age-ms 0: every read from the file ----
start --db "$T/reads.db" --simulate-nodes 1x2 --read-max-age-ms 0
H0=$(metric allot_read_cache_hits_total)
for i in 1 2 3; do [ "$(field "$W1" name)" = renamed ] || fail "w1 read as $(field "$W1" name)"; done
[ "$(metric allot_read_cache_hits_total)" = "${H0:-0}" ] ||
  fail "answers from memory with --read-max-age-ms 0"
