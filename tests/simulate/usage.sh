#!/bin/sh
# usage.sh ALLOT DIR: the command line: help and version on stdout with
# status 0; no command, an unknown command, no file, an unknown option: a
# usage line on stderr and status 2; a missing file: "FILE: OS error" and
# status 2, while the other files still run.
set -u
allot=$1 dir=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; echo "stdout:"; cat "$out"; echo "stderr:"; cat "$err"; exit 1; }

# run STATUS ARGS...: runs allot with ARGS, expecting exit status STATUS.
run() {
    want=$1
    shift
    "$allot" "$@" >"$out" 2>"$err"
    rc=$?
    [ "$rc" = "$want" ] || fail "allot $*: exit status $rc, expected $want"
}

run 0 --help
grep -q '^usage: allot <command>' "$out" || fail "--help: no usage"
grep -q 'simulate' "$out" || fail "--help: simulate not listed"
run 0 --version
grep -Eqx 'allot [0-9]+\.[0-9]+\.[0-9]+ \(git [^ )]+\)' "$out" || fail "--version"
run 0 simulate --help
grep -q '^usage: allot simulate \[--json\] \[--timing\] \[--incremental\] FILE\.\.\.' "$out" || fail "simulate --help"

run 2
grep -q '^usage: allot <command>' "$err" || fail "no command: no usage on stderr"
run 2 frobnicate
grep -q "unknown command 'frobnicate'" "$err" || fail "unknown command"
run 2 simulate
grep -q '^usage: allot simulate' "$err" || fail "no file: no usage on stderr"
run 2 simulate --bogus "$dir/scenarios/schedule.json"
grep -q "unknown option '--bogus'" "$err" || fail "unknown option"
grep -q '^usage: allot simulate' "$err" || fail "unknown option: no usage"
[ -s "$out" ] && fail "unknown option: something ran"

run 2 simulate "$dir/no-such-file.json"
grep -qx "$dir/no-such-file.json: No such file or directory" "$err" || fail "missing file"
run 2 simulate "$dir"
grep -qx "$dir: Is a directory" "$err" || fail "a directory"
run 2 simulate "$dir/no-such-file.json" "$dir/scenarios/schedule.json"
grep -qx '1 passed, 0 failed' "$out" || fail "the file after a missing one did not run"
run 0 simulate -- "$dir/scenarios/schedule.json"
echo ok
