#!/bin/sh
# e2e_container.sh: a workload naming an image on a node whose container
# runtime answers runs through `docker run` with its devices, name,
# environment (the workload's variables by name: their values, a secret's
# among them, come through docker's own environment, never its command
# line), entrypoint and arguments, and stops through `docker stop`.
# The docker here is a fake on PATH: it records its arguments and runs the
# container's command as a plain process.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

mkdir -p "$T/bin" "$T/docker"
cat >"$T/bin/docker" <<'EOF'
#!/bin/sh
# a fake docker: info answers; run records its arguments and runs the
# container's command; stop, kill and rm signal what run started
D=$(dirname "$0")/../docker
verb=$1; shift
case $verb in
info) exit 0 ;;
run)
  echo "$*" >>"$D/runs"
  name="" entry=""
  while [ $# -gt 0 ]; do
    case $1 in
    --rm) shift ;;
    --name) name=$2; shift 2 ;;
    --cidfile) printf '%s\n' 0123456789abcdef0123456789abcdef >"$2"; shift 2 ;;
    -e) export "$2"; shift 2 ;;
    --gpus|-w|--device) shift 2 ;;
    --entrypoint) entry=$2; shift 2 ;;
    *) break ;;
    esac
  done
  shift # the image
  echo $$ >"$D/$name.pid"
  exec $entry "$@" ;;
stop) echo "stop $*" >>"$D/stops"; kill -TERM "$(cat "$D/$3.pid")" 2>/dev/null; exit 0 ;;
kill) kill -KILL "$(cat "$D/$1.pid")" 2>/dev/null; exit 0 ;;
rm) exit 0 ;;
esac
exit 1
EOF
chmod +x "$T/bin/docker"

start_admin --rate-limit 0
(PATH="$T/bin:$PATH"; export PATH; new_agent node-c --gpus 2 --runtime docker)
ready node-c
grep -q "node node-c, docker" "$T/node-c.log" || fail "the agent did not pick docker"

P=$(project p 2)
submit k1 "$P" 2 "$T/trap.sh" "'one arg' two" 5 >/dev/null
wait_phase_long k1 Running
until_ok 10 has_process k1 || fail "k1 has no process"
UIDK=$(ls "$T/node-c/pods")
RUN=$(cat "$T/docker/runs")
for want in "--rm" "--name allot-$UIDK" "--cidfile $T/node-c/pods/$UIDK/cid" "-e OUT " \
    "-e ALLOT_POD_UID=$UIDK" \
    '--gpus "device=0,1"' "--entrypoint $T/trap.sh busybox one arg two"; do
  case $RUN in *"$want"*) ;; *) fail "docker run lacks '$want': $RUN" ;; esac
done
case $RUN in *"$OUT"*) fail "docker run shows a variable's value: $RUN" ;; esac
events_of k1 | grep -q "^Started: .*ran image busybox with docker" || fail "k1: $(events_of k1)"

expect 202 DELETE "/api/v1/workloads/$(wl_id k1)" "" "$ADMIN" >/dev/null
until_ok 10 grep -q "stop --time 5 allot-$UIDK" "$T/docker/stops" || fail "no docker stop"
until_ok 10 no_process k1 || fail "k1 still runs"
[ -s "$OUT/k1.term" ] || fail "k1 did not get SIGTERM"

finish node-c
echo "ok"
