#!/bin/sh
# usage.sh ALLOT DIR: the command line: --help, missing and bad options,
# files that cannot be read, options that do not fit the files.
set -u
allot=$1 dir=$2
out=$(mktemp) err=$(mktemp) tmp=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$err"; exit 1; }

# refuse MESSAGE ARGS...: exit status 2 and MESSAGE (a grep -F pattern) on stderr.
refuse() {
    msg=$1
    shift
    "$allot" replay "$@" >"$out" 2>"$err"
    rc=$?
    [ "$rc" = 2 ] || fail "replay $*: exit status $rc, expected 2"
    grep -qF -- "$msg" "$err" || fail "replay $*: stderr does not say \"$msg\""
}

nodes=$dir/nodes-1x4.csv pods=$dir/hol.csv
"$allot" replay --help >"$out" 2>"$err" || fail "--help: exit status $?"
grep -q '^usage: allot replay --nodes' "$out" || fail "--help prints no usage"
"$allot" --help | grep -q '^  replay ' || fail "allot --help does not list replay"

refuse "--nodes and --pods are required" --pods "$pods"
refuse "usage: allot replay" --nodes "$nodes"
refuse "unknown option '--bogus'" --nodes "$nodes" --pods "$pods" --bogus 1
refuse "--policy 'fifo,best': expected" --nodes "$nodes" --pods "$pods" --policy fifo,best
refuse "--projects '0': expected" --nodes "$nodes" --pods "$pods" --projects 0
refuse "--projects '2.5': expected" --nodes "$nodes" --pods "$pods" --projects 2.5
refuse "--period-s '-1': expected" --nodes "$nodes" --pods "$pods" --period-s -1
refuse "--speedup 'fast': expected" --nodes "$nodes" --pods "$pods" --speedup fast
refuse "--inflate '0': expected" --nodes "$nodes" --pods "$pods" --inflate 0
refuse "--seed needs a value" --nodes "$nodes" --pods "$pods" --seed
refuse "$dir/none.csv: No such file or directory" --nodes "$nodes" --pods "$dir/none.csv"
refuse "only --inflate can use it" --nodes "$dir/nodes-1x2.csv" --pods "$dir/one-task.csv"
refuse "--projects 3, but $dir/quota-ab.csv names 2 projects" --nodes "$nodes" --pods "$pods" \
    --quota-file "$dir/quota-ab.csv" --projects 3
refuse "--pools 'many': expected model or single" --nodes "$nodes" --pods "$pods" --pools many
refuse "write * as the pool of team-a" --nodes "$nodes" --pods "$pods" --pools single \
    --quota-file "$dir/quota-ab.csv"
refuse "give --racks too" --nodes "$nodes" --pods "$pods" --blocks 2
refuse "give --racks too" --nodes "$nodes" --pods "$pods" --topology blind
refuse "--racks '0': expected" --nodes "$nodes" --pods "$pods" --racks 0
refuse "--topology 'maybe': expected aware or blind" --nodes "$nodes" --pods "$pods" --racks 2 \
    --topology maybe
: >"$tmp/file"
refuse "$tmp/file" --nodes "$nodes" --pods "$pods" --report "$tmp/file"

"$allot" replay --nodes "$nodes" --pods "$pods" --policy allot >"$out" 2>"$err" ||
    fail "a good replay: exit status $?"
[ "$(grep -c '^| allot |' "$out")" = 1 ] || fail "the headline table has no allot row"
grep -q '^| fifo |' "$out" && fail "--policy allot also ran fifo"
[ -s "$err" ] && fail "a good replay wrote to stderr"
"$allot" replay --nodes "$nodes" --pods "$pods" --timing >"$out" 2>"$err" ||
    fail "--timing: exit status $?"
grep -q '^timing: replay allot-spread: ' "$err" || fail "--timing gives no wall times"
echo ok
