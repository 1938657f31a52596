#!/bin/sh
# replica_reads.sh ALLOTD: three allotd replicas on one PostgreSQL answer
# GETs of a workload and lists of workloads from memory (api/readcache.c,
# docs/allotd.md "Reads from memory"), and no answer is stale beyond its
# bound:
#   1. the change feed: a change made through A shows on B (60 s of age
#      allowed, and no write of its own meanwhile) within a few of its
#      scheduler turns;
#   2. read your writes: a replica's own change (suspend, resume, delete)
#      shows in its very next GET and list, on the leader A and on the
#      follower B, whose kept answers would otherwise live 60 s;
#   3. the bound: a change written to the database with no row of the
#      change feed shows on follower C (--read-max-age-ms 1000) within
#      1 s and the poll's slack, while C's answers come from memory
#      (allot_read_cache_hits_total grows);
#   4. a tenant setting changed through A reaches B and C.
ALLOTD=$1
ALLOT_TEST_DB=pg
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/ha_lib.sh"
# followers that ask for the lease only every 30 s write nothing meanwhile
OPTS_B="--read-max-age-ms 60000 --leader-ask-ms 30000"

replicas
follower URL_C PID_C c --read-max-age-ms 1000 --leader-ask-ms 30000
project

# field_at URL ID FIELD: FIELD of workload ID as the replica at URL answers
# GET /api/v1/workloads/{id} (HTTP status if not 200)
field_at() {
  _out=$(curl -s -w '\n%{http_code}' "$1/api/v1/workloads/$2" -H "Authorization: Bearer $ADMIN")
  _code=$(printf '%s\n' "$_out" | tail -n 1)
  [ "$_code" = 200 ] || { echo "$_code"; return 0; }
  printf '%s\n' "$_out" | sed '$d' | jq -r ".$3"
}
# named_at URL NAME: how many workloads named NAME the replica's list holds
named_at() {
  curl -s "$1/api/v1/workloads?filterBy=name==$2&limit=50" -H "Authorization: Bearer $ADMIN" |
    jq '.workloads | length'
}
act_at() {
  _code=$(curl -s -o /dev/null -w '%{http_code}' -X POST \
    "$1/api/v1/workloads/trainings/$2/$3" -H "Authorization: Bearer $ADMIN")
  [ "$_code" = 202 ] || fail "$3 of $2 through $1: $_code"
}
# read_twice_at URL HITS: w3 read twice in a row at URL, and the replica's
# reads from memory now above HITS. A GET repeated at once is answered from
# memory, unless a change-feed row (another replica's suspension or
# resumption, a scheduler's binds) reaches the replica between the two and
# drops its entries (design 2 of api/readcache.c): callers poll it, so the
# pair is tried again until one hits.
read_twice_at() {
  [ "$(field_at "$1" "$W3" submittedBy)" = admin ] || fail "$1: w3 not submitted by admin"
  [ "$(field_at "$1" "$W3" submittedBy)" = admin ] || fail "$1: w3 not submitted by admin"
  [ "$(metric "$1" allot_read_cache_hits_total)" -gt "$2" ]
}
id_of() {
  curl -s "$URL/api/v1/workloads?filterBy=name==$1" -H "Authorization: Bearer $ADMIN" |
    jq -r '.workloads[0].id'
}

for n in w1 w2 w3; do [ "$(submit_to "$URL" $n)" = 202 ] || fail "$n not taken"; done
poll 20 running_at "$URL" w3 || fail "A did not place w3"
W1=$(id_of w1)
W2=$(id_of w2)
W3=$(id_of w3)

# 1. the change feed: A's change on B within a few turns
[ "$(field_at "$URL_B" "$W3" desiredPhase)" = Running ] || fail "B: w3 is not to run"
[ "$(named_at "$URL_B" w4)" = 0 ] || fail "B lists a w4 before there is one"
COMMITS_B=$(metric "$URL_B" allot_db_commits_total)
T0=$(now_ms)
act_at "$URL" "$W3" suspend
[ "$(submit_to "$URL" w4)" = 202 ] || fail "w4 not taken"
stopped_b() { [ "$(field_at "$URL_B" "$W3" desiredPhase)" = Stopped ]; }
listed_b() { [ "$(named_at "$URL_B" w4)" = 1 ]; }
poll 10 stopped_b || fail "B does not show A's suspension of w3 (the change feed)"
poll 10 listed_b || fail "B does not list w4, submitted through A (the change feed)"
echo "# B showed A's changes after $(($(now_ms) - T0)) ms"
# nothing of B's own dropped its answers: only the change feed did
[ "$(metric "$URL_B" allot_db_commits_total)" = "$COMMITS_B" ] || fail "B wrote meanwhile"

# 2. read your writes, on the leader and on a follower
for u in "$URL" "$URL_B"; do
  [ "$(field_at "$u" "$W1" desiredPhase)" = Running ] || fail "$u: w1 is not to run"
  [ "$(field_at "$u" "$W1" desiredPhase)" = Running ] || fail "$u: w1 is not to run"
  [ "$(named_at "$u" w1)" = 1 ] || fail "$u: w1 not listed"
  act_at "$u" "$W1" suspend
  [ "$(field_at "$u" "$W1" desiredPhase)" = Stopped ] ||
    fail "$u: its own suspension of w1 does not show at once"
  act_at "$u" "$W1" resume
  [ "$(field_at "$u" "$W1" desiredPhase)" = Running ] ||
    fail "$u: its own resumption of w1 does not show at once"
done
[ "$(named_at "$URL_B" w2)" = 1 ] || fail "B: w2 not listed"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL_B/api/v1/workloads/trainings/$W2" \
  -H "Authorization: Bearer $ADMIN")
[ "$code" = 202 ] || fail "delete of w2 through B: $code"
[ "$(named_at "$URL_B" w2)" = 0 ] || fail "B: its own deletion of w2 does not show in its list"
# B answers from memory (read_twice_at, below the helpers)
HITS_B0=$(metric "$URL_B" allot_read_cache_hits_total)
poll 10 read_twice_at "$URL_B" "${HITS_B0:-0}" || fail "B answered no read from memory (${HITS_B0:-0} hits before)"

# 3. the bound: a write with no change-feed row, on C within --read-max-age-ms
HITS_C0=$(metric "$URL_C" allot_read_cache_hits_total)
poll 10 read_twice_at "$URL_C" "$HITS_C0" || fail "C reads w3 from the database every time ($HITS_C0 hits before)"
COMMITS_C=$(metric "$URL_C" allot_db_commits_total)
# the slack: the poll's own cost counts too (one look at w3 on C, timed, is
# hundreds of milliseconds on a loaded machine: a look begun just before
# the change showed is answered after it did)
L0=$(now_ms)
edited_c() { [ "$(field_at "$URL_C" "$W3" submittedBy)" = someone ]; }
edited_c || true
LOOK=$(($(now_ms) - L0))
pg_psql -c "UPDATE workloads SET created_by = 'someone' WHERE id = '$W3'"
T0=$(now_ms)
poll 10 edited_c || fail "C still shows the old row of w3"
AGE=$(($(now_ms) - T0))
echo "# C showed the database's change after $AGE ms (bound 1000 ms, a look $LOOK ms)"
[ "$AGE" -le $((1000 + 1000 * SCALE + 2 * LOOK)) ] ||
  fail "C showed it after $AGE ms, past 1 s and the slack (a look took $LOOK ms)"
[ "$(metric "$URL_C" allot_db_commits_total)" = "$COMMITS_C" ] || fail "C wrote meanwhile"

# 4. a tenant setting through A, on B and C
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$URL/v1/k8s/setting" \
  -H 'Content-Type: application/json' -H "Authorization: Bearer $ADMIN" \
  -d '{"key":"workloads.maxPendingPerProject","value":7}')
[ "$code" = 200 ] || fail "PUT of the setting through A: $code"
cap_at() {
  [ "$(curl -s "$1/v1/k8s/setting" -H "Authorization: Bearer $ADMIN" |
    jq -r '.[] | select(.key == "workloads.maxPendingPerProject") | .value')" = 7 ]
}
poll 10 cap_at "$URL_B" || fail "B does not apply the setting changed through A"
poll 10 cap_at "$URL_C" || fail "C does not apply the setting changed through A"

stop_pid "$PID_C" "replica C" "$T/log-c"
PID_C=""
stop_pid "$PID_B" "replica B" "$T/log-b"
PID_B=""
