#!/bin/sh
# check_error.sh ALLOT FILE PATH: `allot simulate FILE` must reject the file
# as bad input: exit status 2 and exactly one line on stderr, starting with
# "FILE: PATH: " (the file as given, then the JSON path of the problem).
set -u
allot=$1 file=$2 path=$3
err=$(mktemp)
trap 'rm -f "$err"' EXIT

"$allot" simulate "$file" >/dev/null 2>"$err"
rc=$?
if [ "$rc" != 2 ]; then
    echo "FAIL: exit status $rc, expected 2"; cat "$err"; exit 1
fi
if [ "$(wc -l <"$err")" != 1 ]; then
    echo "FAIL: expected exactly one line on stderr:"; cat "$err"; exit 1
fi
line=$(cat "$err")
case "$line" in
"$file: $path: "*) echo "ok: $line" ;;
*) echo "FAIL: expected \"$file: $path: ...\", got:"; echo "$line"; exit 1 ;;
esac
