#!/bin/sh
# usage.sh ALLOT: the client's command line with no server: every usage
# error exits 2 with a message and the usage line on stderr, prints
# nothing on stdout and calls no server; --help exits 0 on stdout;
# commands that need a login say how to log in (exit 1); the bash
# completion script parses and completes.
set -u
ALLOT=$1
T=$(mktemp -d /tmp/allot-cli-usage-XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
export ALLOT_CONFIG="$T/config.json"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86"
# a server that refuses connections: any call to it would exit 1, not 2
printf '{"url": "http://127.0.0.1:1", "accessToken": "x.e30.x", "refreshToken": "r"}\n' \
  >"$ALLOT_CONFIG"
chmod 600 "$ALLOT_CONFIG"
failed=0

# usage FRAGMENT ARGS...: allot ARGS (stdin not a terminal) exits 2,
# stderr holds FRAGMENT and a usage line, stdout is empty.
usage() {
  frag=$1; shift
  rc=0
  "$ALLOT" "$@" </dev/null >"$T/out" 2>"$T/err" || rc=$?
  if [ "$rc" != 2 ] || ! grep -qF -- "$frag" "$T/err" || ! grep -q '^usage: allot' "$T/err" ||
     [ -s "$T/out" ]; then
    echo "FAIL: allot $*: exit $rc, wanted 2 with '$frag' and a usage line"
    sed 's/^/  stderr: /' "$T/err"; sed 's/^/  stdout: /' "$T/out"
    failed=1
  fi
}

# help ARGS...: allot ARGS exits 0 with a usage line on stdout.
help() {
  rc=0
  "$ALLOT" "$@" </dev/null >"$T/out" 2>"$T/err" || rc=$?
  if [ "$rc" != 0 ] || ! grep -q '^usage: allot' "$T/out"; then
    echo "FAIL: allot $*: exit $rc, wanted 0 and a usage line on stdout"
    failed=1
  fi
}

# command groups and verbs
usage "a command is missing" training
usage "unknown command 'frob'" training frob
usage "unknown command 'submit'" workload submit x
usage "unknown command 'suspend'" inference suspend x
usage "a command is missing" project
usage "add -y" project delete x
usage "one project at a time" project delete a b -y
usage "NAME is missing" department delete -y
usage "a command is missing" department
usage "a command is missing" node
usage "unknown command 'show'" nodepool show
usage "which shell" completion
usage "a command is missing" whatif
usage "unknown command 'cordon'" whatif cordon x
usage "NAME is missing" whatif quota --gpu-quota 1
usage "--gpu-quota N is required" whatif quota team-a
usage "--gpu-quota wants a number" whatif quota team-a --gpu-quota lots
usage "unexpected argument 'b'" whatif quota a b --gpu-quota 1
usage "NODE is missing" whatif drain
usage "one node at a time" whatif drain node-1 node-2
usage "unknown option" whatif drain node-1 --gpu-quota 1
usage "NAME is missing" whatif delete -p team-a
usage "unexpected argument 'b'" whatif suspend a b
usage "unknown option" whatif delete a1 --gpu-quota 1
usage "only bash" completion zsh

# submit
usage "NAME is missing" training submit
usage "NAME is missing" training submit -i img
usage "-i IMAGE is required" training submit a1
usage "needs a value" training submit a1 -i
usage "unknown option '--bogus'" training submit a1 -i img --bogus
usage "takes no value" training submit a1 -i img --json=yes
usage "unexpected argument 'b1'" training submit a1 b1 -i img
usage "after --" training submit a1 -i img python train.py
usage "-g wants a whole number" training submit a1 -i img -g x
usage "-g wants a whole number" training submit a1 -i img -g 65
usage "-g wants a whole number" training submit a1 -i img -g 1.5
usage "--gpu-portion-request wants" training submit a1 -i img --gpu-portion-request 1.5
usage "--gpu-portion-request wants" training submit a1 -i img --gpu-portion-request 0
usage "memory of one GPU" training submit a1 -i img --gpu-memory-request 20G -g 2
usage "such as 20G" training submit a1 -i img --gpu-memory-request 20000
usage "--cpu-core-request wants" training submit a1 -i img --cpu-core-request -1
usage "--cpu-memory-request wants" training submit a1 -i img --cpu-memory-request lots
for q in nan inf -1Gi 1e400 0x10 " 1G" 2Zi 99999999999999999999Ei 1.Gi; do
  usage "--cpu-memory-request wants" training submit a1 -i img --cpu-memory-request "$q"
done
usage "--cpu-core-request wants" training submit a1 -i img --cpu-core-request nan
usage "--cpu-core-request wants" training submit a1 -i img --cpu-core-request inf
usage "--preemptibility is" training submit a1 -i img --preemptibility sometimes
usage "-e wants NAME=VALUE" training submit a1 -i img -e NOEQUALS
usage "-e wants NAME=VALUE" training submit a1 -i img -e =x
usage "--command needs the command" training submit a1 -i img --command
usage "--command needs the command" training submit a1 -i img --command --
usage "not both" training submit a1 --name-prefix a -i img
usage "--parallelism wants" training submit a1 -i img --parallelism 0
usage "the same for training" training submit a1 -i img --parallelism 2 --workers 2
usage "--workers is for training and distributed" workspace submit w1 -i img --workers 2
usage "--parallelism is for training" distributed submit d1 -i img --parallelism 2
usage "--framework is for distributed" training submit t1 -i img --framework PyTorch
usage "--no-master is for distributed" inference submit i1 -i img --no-master
usage "--framework is PyTorch" distributed submit d1 -i img --framework Caffe
usage "are for distributed and inference" training submit t1 -i img --min-replicas 2
usage "above --max-replicas" inference submit i1 -i img --min-replicas 3 --max-replicas 2
usage "unknown option '--no-mastr'" workspace submit w1 -i img --no-mastr

# list
usage "-A and -p exclude each other" workload list -A -p team-a
usage "unknown status 'Sleeping'" workload list --status Sleeping
usage "unknown type 'batch'" workload list --type batch
usage "--type is for allot workload list" training list --type workspace
usage "exclude each other" workload list --json --yaml
usage "exclude each other" training list --json --no-headers
usage "unexpected argument 'extra'" workload list extra
usage "needs a value" workload list -p
usage "exclude each other" project list --yaml --json
usage "unknown option '--bogus'" project list --bogus
usage "unexpected argument 'extra'" node list extra
usage "unexpected argument 'extra'" nodepool list extra
usage "NAME is missing" agent token create
usage "ID is missing" agent token revoke
usage "unknown command 'show'" agent token show
usage "a subcommand is missing" agent
usage "unexpected argument 'extra'" department list extra

# describe, delete, suspend, resume, logs
usage "NAME is missing" training describe
usage "one workload at a time" training describe a1 a2
usage "-o is table, json or yaml" training describe a1 -o xml
usage "--event-limit wants" workload describe a1 --event-limit 0
usage "NAME is missing" training delete -y
usage "add -y" training delete a1
usage "add -y" workload delete a1 -p team-a
usage "-y is for delete" training suspend a1 -y
usage "NAME is missing" training resume
usage "one workload at a time" workspace suspend w1 w2
usage "--tail wants" training logs a1 --tail x
usage "--tail wants" training logs a1 --tail -2
usage "NAME is missing" inference logs -f

# organization
usage "--gpu-quota N is required" project create team-a
usage "NAME is missing" project create --gpu-quota 2
usage "unexpected argument 'b'" project create a b --gpu-quota 2
usage "--gpu-quota wants" project create team-a --gpu-quota two
usage "--gpu-quota wants" project create team-a --gpu-quota -1
usage "--limit is below --gpu-quota" project create team-a --gpu-quota 2 --limit 1
usage "--limit wants" project create team-a --gpu-quota 2 --limit -2
usage "--over-quota-weight wants" project create team-a --gpu-quota 2 --over-quota-weight -1
usage "unknown option '--department'" department create d1 --gpu-quota 1 --department x
usage "NAME is missing" project set
usage "one project at a time" project set a b
usage "NAME is missing" project edit --rank 1
usage "nothing to change" project edit team-a
usage "nothing to change" department edit d1 --json
usage "followed by no quota flag" project edit team-a --rank 1 --node-pool a100
usage "--gpu-quota wants a number" project edit team-a --gpu-quota lots
usage "--rank wants a whole number" project edit team-a --rank 1.5
usage "--training-time-limit wants a duration" project edit team-a --training-time-limit 2x
usage "--over-quota-priority is one of" project edit team-a --over-quota-priority Top

# node pools
usage "NAME is missing" nodepool create --label a=b
usage "--label KEY=VALUE is required" nodepool create p1
usage "--label wants KEY=VALUE" nodepool create p1 --label a=
usage "--placement is one of" nodepool create p1 --label a=b --placement pack
usage "--time-based-fairshare is on or off" nodepool edit p1 --time-based-fairshare maybe
usage "--tbf-k wants a number" nodepool edit p1 --tbf-k -1
usage "--tbf-half-life wants a duration" nodepool edit p1 --tbf-half-life 1y
usage "nothing to change" nodepool edit p1
usage "one node pool at a time" nodepool delete p1 p2 -y
usage "add -y" nodepool delete p1

# access rules
usage "a command is missing" access-rule
usage "--subject and --role are required" access-rule create --role Viewer --system
usage "a scope is required" access-rule create --subject a --role Viewer
usage "exclude each other" access-rule create --subject a --role Viewer --system --department d
usage "--subject-type is one of" access-rule create --subject a --role V --system --subject-type x
usage "ID is a rule's number" access-rule delete abc -y
usage "add -y" access-rule delete 3
usage "exclude each other" access-rule list --csv --yaml

# --csv
usage "exclude each other" workload list --csv --json
usage "exclude each other" node list --yaml --csv
usage "exclude each other" agent token list --csv --json

# the runai v1 forms: refused when allot cannot honour them, before any
# request
usage "the runai v1 flag --jupyter is not supported" submit a1 -i img --jupyter
usage "the runai v1 flag --volume is not supported" submit a1 -i img -v /data:/data
usage "--gpu wants whole GPUs" submit a1 -i img --gpu 1.5
usage "unknown option '--bogus'" submit a1 -i img --bogus
usage "'bash a1' is not supported" bash a1
usage "'exec a1' is not supported" exec a1 -- ls
usage "allot has no node describe" describe node n1
usage "'list clusters' is not supported" list clusters
usage "-i IMAGE is required" submit a1 --gpu 1
usage "-y is for delete" suspend a1 -y
usage "--all is for delete" training suspend --all
usage "give no NAME" training delete a1 --all -y
usage "add -y" training delete --all
usage "give NAME or --name NAME, not both" training submit a1 --name a2 -i img
usage "give NAME or --name NAME, not both" submit a1 --name a2 -i img
usage "--command \"sh -c 'x\": a quote is not closed" submit a1 -i img --command "sh -c 'x"
usage "-o is table, json or yaml" project describe team-a -o wide
usage "NAME is missing" describe project
usage "NAME is missing" describe
usage "NAME is missing" config project
usage "allot project set NAME sets the project" config cluster x

# an unknown command names the nearest verb
usage "unknown command 'sumbit': did you mean 'submit'?" sumbit a1
usage "unknown command 'lst': did you mean 'list'?" lst
usage "unknown command 'projct': did you mean 'project'?" projct list
usage "unknown command 'sbumit': did you mean 'submit'?" training sbumit
usage "unknown command 'lsit': did you mean 'list'?" project lsit
usage "unknown command 'descibe': did you mean 'describe'?" workload descibe a1
usage "unknown command 'suspnd'" inference suspnd a1
usage "unknown command 'xyzzy'" xyzzy
for w in "inference suspnd a1" "xyzzy" "training frob"; do
  # shellcheck disable=SC2086
  "$ALLOT" $w </dev/null >"$T/out" 2>"$T/err"
  if grep -q 'did you mean' "$T/err"; then
    echo "FAIL: allot $w: a hint where none is near: $(head -n 1 "$T/err")"; failed=1
  fi
done

# login, logout, whoami
usage "exclude each other" login --user a --client-id b
usage "--password-stdin needs --user" login --password-stdin
usage "--client-secret-stdin needs --client-id" login --client-secret-stdin
usage "--url must start with http://" login --url ftp://x --user a --password-stdin
usage "no terminal to ask on" login --url http://127.0.0.1:1
usage "no terminal to ask the password" login --url http://127.0.0.1:1 --user a
usage "no terminal to ask the secret" login --url http://127.0.0.1:1 --client-id a
usage "no password given on standard input" login --url http://127.0.0.1:1 --user a --password-stdin
usage "unexpected argument 'y'" login x y
usage "unexpected argument 'x'" login --user a x
usage "no terminal to ask the password" login --url http://127.0.0.1:1 alice
usage "no terminal to ask the password" login --url http://127.0.0.1:1 user -u alice
usage "instead of --password, use --password-stdin" login --user a --password hunter2
usage "instead of --password, use --password-stdin" login user -u a -p hunter2
usage "instead of --password, use --password-stdin" login --password=hunter2
usage "instead of --client-secret, use --client-secret-stdin" login --client-id a --client-secret s
"$ALLOT" login --user a --password hunter2 </dev/null >"$T/out" 2>"$T/err"
if grep -q hunter2 "$T/err" "$T/out"; then echo "FAIL: login echoes a password"; failed=1; fi
usage "unexpected argument 'x'" version x
usage "unexpected argument 'x'" logout x
usage "unknown option '--bogus'" whoami --bogus

# help
help --help
help training --help
help training submit --help
help training pytorch submit --help
help workload list --help
help workspace describe -h
help inference delete --help
help distributed logs --help
help project --help
help project create --help
help project set --help
help department list --help
help node list --help
help nodepool --help
help login --help
help logout --help
help whoami --help
help version --help
help project describe --help
help department describe --help
help completion --help
help whatif --help
help whatif quota --help
help whatif drain --help
help whatif delete --help
help whatif suspend --help
help project edit --help
help department edit --help
help nodepool create --help
help nodepool edit --help
help nodepool delete --help
help project delete --help
help department delete --help
help access-rule --help
help access-rule create --help
help access-rule list --help
help submit --help
"$ALLOT" training submit --help >"$T/out"
grep -q -- '--gpu-devices-request' "$T/out" || { echo "FAIL: submit --help lists no flags"; failed=1; }
grep -q -- '--dry-run' "$T/out" || { echo "FAIL: submit --help lists no --dry-run"; failed=1; }
"$ALLOT" --help >"$T/out"
for c in login project training workspace inference distributed workload node nodepool \
         whatif access-rule agent completion simulate version; do
  grep -q "^  $c " "$T/out" || { echo "FAIL: allot --help does not list $c"; failed=1; }
done

# version: the client's always; the server's when it answers (here it refuses)
rc=0; "$ALLOT" version </dev/null >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] && grep -q '^Client:  allot [0-9]' "$T/out" ||
  { echo "FAIL: allot version: exit $rc: $(cat "$T/out" "$T/err")"; failed=1; }
rc=0; "$ALLOT" --version </dev/null >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] && grep -q '^allot [0-9]' "$T/out" || { echo "FAIL: allot --version"; failed=1; }

# a bad timeout in the environment is a usage error too
rc=0; ALLOT_TIMEOUT=soon "$ALLOT" whoami >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q 'ALLOT_TIMEOUT must be a number of seconds' "$T/err" ||
  { echo "FAIL: ALLOT_TIMEOUT=soon: exit $rc"; failed=1; }

# not logged in: exit 1 and how to log in
rm -f "$ALLOT_CONFIG"
for cmd in whoami "workload list -A" "project list" "node list" "training describe a1" \
           "training submit a1 -i img -g 1 -p team-a" "training submit a1 -i img --dry-run" \
           "whatif drain node-1" "whatif quota team-a --gpu-quota 1"; do
  rc=0
  # shellcheck disable=SC2086
  "$ALLOT" $cmd </dev/null >"$T/out" 2>"$T/err" || rc=$?
  if [ "$rc" != 1 ] || ! grep -q '^allot: not logged in: run allot login --url ' "$T/err"; then
    echo "FAIL: allot $cmd when logged out: exit $rc"; sed 's/^/  /' "$T/err"; failed=1
  fi
done
usage "no server known yet: give --url" login --user admin --password-stdin

# completion: the script parses, and completes groups, verbs and flags
if command -v bash >/dev/null; then
  "$ALLOT" completion bash >"$T/completion.bash" || { echo "FAIL: completion bash"; failed=1; }
  bash -n "$T/completion.bash" || { echo "FAIL: the completion script does not parse"; failed=1; }
  got=$(PATH="$(dirname "$ALLOT"):$PATH" bash -c '
    . "$1"
    complete -p allot >/dev/null || exit 1
    try() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _allot; echo "${COMPREPLY[*]}"; }
    try allot tr
    try allot training sub
    try allot training pytorch sub
    try allot workload list --st
    try allot training submit a1 --preemptibility n
    try allot completion b
  ' sh "$T/completion.bash")
  want=$(printf '%s\n' training submit submit --status non-preemptible bash)
  [ "$got" = "$want" ] || { echo "FAIL: completion gave:"; echo "$got"; failed=1; }
fi

[ "$failed" = 0 ] && echo "ok: usage"
exit "$failed"
