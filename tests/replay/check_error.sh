#!/bin/sh
# check_error.sh ALLOT DIR KIND FILE LINE: `allot replay` must reject the
# malformed file DIR/malformed/FILE, given as KIND (pods, nodes or quota):
# exit status 2 and exactly one line on stderr, starting with
# "allot replay: PATH:LINE: " (the path as given, then the line number).
set -u
allot=$1 dir=$2 kind=$3 file=$4 line=$5
path=$dir/malformed/$file
err=$(mktemp)
trap 'rm -f "$err"' EXIT

case $kind in
pods) "$allot" replay --nodes "$dir/nodes-1x4.csv" --pods "$path" >/dev/null 2>"$err" ;;
nodes) "$allot" replay --nodes "$path" --pods "$dir/hol.csv" >/dev/null 2>"$err" ;;
quota) "$allot" replay --nodes "$dir/nodes-1x4.csv" --pods "$dir/hol.csv" \
    --quota-file "$path" >/dev/null 2>"$err" ;;
*) echo "FAIL: unknown kind $kind"; exit 1 ;;
esac
rc=$?
[ "$rc" = 2 ] || { echo "FAIL: exit status $rc, expected 2"; cat "$err"; exit 1; }
[ "$(wc -l <"$err")" = 1 ] || { echo "FAIL: expected one line on stderr:"; cat "$err"; exit 1; }
msg=$(cat "$err")
case "$msg" in
"allot replay: $path:$line: "*) echo "ok: $msg" ;;
*) echo "FAIL: expected \"allot replay: $path:$line: ...\", got:"; echo "$msg"; exit 1 ;;
esac
