# pg_bench.sh: sourced by the PostgreSQL benchmarks of this folder (after
# tests/pg/pg_lib.sh's pg_start): allotd started on a fresh schema
# (allotd_start), the CPU ticks of the server and of allotd ($PID), HZ a
# second, and a trap that stops both on exit.
HZ=$(getconf CLK_TCK)
PID=""
trap '[ -z "$PID" ] || kill -9 "$PID" 2>/dev/null; pg_stop' EXIT

# CPU ticks of the server: the postmaster (its reaped backends) and its children
pg_ticks() {
  local s=0 pm t
  pm=$(head -n 1 "$PG_DATA/postmaster.pid")
  for p in $pm $(pgrep -P "$pm"); do
    t=$(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$p/stat" 2>/dev/null || true)
    s=$((s + ${t:-0}))
  done
  echo "$s"
}
own_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"; }

# allotd_start BIN NODES: BIN on a fresh public schema of the server, in a
# new folder $T, with rate limits and pending caps off, NODES simulated
# nodes (COUNTxGPUS) and 64 HTTP workers; sets PID and URL.
allotd_start() {
  T=$(mktemp -d /tmp/allot-pgbench-XXXXXX)
  pg_psql -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public' >/dev/null 2>&1
  (cd "$T" && "$1" --init --db "$PG_URI" >>"$T/log" 2>&1)
  (cd "$T" && exec "$1" --db "$PG_URI" --listen 127.0.0.1:0 --port-file "$T/port" \
      --rate-limit 0 --max-pending-per-project 0 --max-pending-per-user 0 \
      --simulate-nodes "$2" --threads 64 >>"$T/log" 2>&1) &
  PID=$!
  while [ ! -s "$T/port" ]; do sleep 0.01; done
  URL="http://127.0.0.1:$(cat "$T/port")"
}
