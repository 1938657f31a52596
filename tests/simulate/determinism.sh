#!/bin/sh
# determinism.sh ALLOT FILE...: the same files give byte-identical output,
# in text and in --json, run after run.
set -u
allot=$1
shift
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT

for mode in "" --json; do
    # shellcheck disable=SC2086
    "$allot" simulate $mode "$@" >"$a" 2>&1
    rc1=$?
    # shellcheck disable=SC2086
    "$allot" simulate $mode "$@" >"$b" 2>&1
    rc2=$?
    [ "$rc1" = "$rc2" ] || { echo "FAIL: exit status $rc1 then $rc2 ($mode)"; exit 1; }
    if ! cmp "$a" "$b"; then
        echo "FAIL: output differs between two runs ($mode)"; diff "$a" "$b"; exit 1
    fi
    [ -s "$a" ] || { echo "FAIL: no output ($mode)"; exit 1; }
done
echo "ok: $# files, $(wc -l <"$a") lines, same bytes twice"
