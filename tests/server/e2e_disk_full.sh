#!/bin/sh
# e2e_disk_full.sh: allotd on a small tmpfs that fills up. While the disk
# is full, submissions answer 507 with the reason, reads answer 200,
# /readyz answers 503 with the reason; once a file is removed, /readyz is
# 200 again by itself (no request needed) and submissions are accepted.
# The database passes PRAGMA integrity_check, every acknowledged
# submission is there, and none of the refused ones.
#
# Mounting a tmpfs needs root: as root the test mounts it directly;
# otherwise it runs itself again as root of a user and mount namespace
# of its own (unshare -rm), where the kernel allows that.
ALLOTD=$1
if [ "$(id -u)" != 0 ]; then
  exec unshare --user --map-root-user --mount sh "$0" "$@" ||
    { echo "FAIL: not root, and unshare --user --mount is not allowed here" >&2; exit 1; }
fi
. "$(dirname "$0")/lib.sh"

mkdir "$T/fs"
mount -t tmpfs -o size=2m,mode=0700 allot-e2e-full "$T/fs" || fail "cannot mount a tmpfs on $T/fs"
# on the way out (lib.sh's cleanup), before $T is removed
test_kill() { umount "$T/fs" 2>/dev/null || umount -l "$T/fs"; }

start --db "$T/fs/a.db" --key-file "$T/a.key" --simulate-nodes 1x1
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"p","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":1}}]}' "$ADMIN" | jq -r .id)
submit() { # NAME: prints the reply and its status
  req POST /api/v1/workloads/trainings \
    "{\"name\":\"$1\",\"projectId\":\"$P\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN"
}
: >"$T/acked"
ack() { # NAME: submits, wants 202, records the id
  out=$(submit "$1")
  [ "$(printf '%s\n' "$out" | tail -n 1)" = 202 ] || fail "submit $1: $out"
  printf '%s\n' "$out" | sed '$d' | jq -r .workloadId >>"$T/acked"
}
ack before-1
ack before-2

# fill the disk: the database can grow no more
dd if=/dev/zero of="$T/fs/filler" bs=16k 2>/dev/null || true
# Submissions that fit in room the database already has (free pages, the
# WAL's recycled frames) are accepted; the first that needs more is
# refused, and later ones until space is freed.
refused=0 i=0
while [ $refused -lt 3 ]; do
  i=$((i + 1)); [ $i -le 500 ] || fail "500 submissions on a full disk and none refused"
  out=$(submit "full-$i")
  code=$(printf '%s\n' "$out" | tail -n 1)
  case $code in
    202) printf '%s\n' "$out" | sed '$d' | jq -r .workloadId >>"$T/acked" ;;
    507) refused=$((refused + 1))
         printf '%s\n' "$out" | grep -q "no space left on the disk holding the database" ||
           fail "a 507 without its reason: $out" ;;
    *) fail "a submission on a full disk answered $code: $out" ;;
  esac
done
out=$(req GET /readyz)
[ "$(printf '%s\n' "$out" | tail -n 1)" = 503 ] || fail "/readyz on a full disk: $out"
printf '%s\n' "$out" | grep -q '"writable":false' && printf '%s\n' "$out" | grep -q "no space left" ||
  fail "/readyz does not say why: $out"
N=$(expect 200 GET "/api/v1/workloads/count" "" "$ADMIN" | jq .count)
[ "$N" = "$(wc -l <"$T/acked")" ] || fail "reads on a full disk: $N workloads, $(wc -l <"$T/acked") acknowledged"
expect 200 GET /healthz >/dev/null

# free space: allotd notices by itself
rm -f "$T/fs/filler"
is_ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ]; }
poll 15 is_ready || fail "/readyz is not 200 after space was freed: $(curl -s "$URL/readyz")"
grep -q "writes to $T/fs/a.db work again" "$T/log" || fail "the log does not say writes work again"
ack after-1
stop

[ "$(sqlite3 "$T/fs/a.db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check failed"
while read -r id; do
  [ "$(sqlite3 "$T/fs/a.db" "SELECT count(*) FROM workloads WHERE id = '$id'")" = 1 ] ||
    fail "acknowledged workload $id is missing"
done <"$T/acked"
[ "$(sqlite3 "$T/fs/a.db" 'SELECT count(*) FROM workloads')" = "$(wc -l <"$T/acked")" ] ||
  fail "a refused submission is in the database"
echo "e2e_disk_full: ok ($refused submissions refused with 507, $(wc -l <"$T/acked") acknowledged)"
