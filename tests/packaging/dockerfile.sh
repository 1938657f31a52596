#!/bin/sh
# dockerfile.sh SOURCE_DIR BUILD_DIR: checks the Dockerfile without a Docker
# engine.
#   - its stages: build on debian:bookworm, then agent and server (the
#     default) on bookworm-slim, a non-root user, the volume, port 8080, a
#     HEALTHCHECK on /healthz, allotd on 0.0.0.0:8080;
#   - every script its RUN lines call exists, and the build stage runs the
#     very commands CI runs (.ci/run) and the README gives, with no other
#     arguments; the runtime stages install the runtime lists of
#     scripts/install-deps.sh;
#   - its install step, run for real against BUILD_DIR into a temporary
#     staging tree, gives every file the later stages copy, the entrypoints and
#     the config file the server's CMD names;
#   - the staged server started with the image's ENTRYPOINT and CMD (plus a
#     loopback port and a temporary database) serves the dashboard from its
#     own share/ folder, and the image's HEALTHCHECK command passes against it.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
DF=$SRC/Dockerfile
PID=""
test_cleanup() {
  if [ -n "$PID" ]; then kill -9 "$PID" 2>/dev/null || true; fi
}
temp_dir dockerfile
FAIL_LOG=$T/log

[ -f "$DF" ] || fail "no Dockerfile at the root"

# The instructions, one per line with continuations joined and comments
# dropped: "STAGE<TAB>INSTRUCTION<TAB>ARGUMENTS".
awk '
  /^[ \t]*#/ { next }
  { line = line $0 }
  /\\[ \t]*$/ { sub(/\\[ \t]*$/, "", line); next }
  {
    gsub(/[ \t]+/, " ", line); sub(/^ /, "", line)
    if (line != "") {
      instr = toupper(line); sub(/ .*/, "", instr)
      args = line; sub(/^[^ ]+ ?/, "", args)
      if (instr == "FROM") { stage = args; sub(/.* [Aa][Ss] /, "", stage) }
      printf "%s\t%s\t%s\n", stage, instr, args
    }
    line = ""
  }' "$DF" >"$T/instr"

# instr STAGE INSTRUCTION: the arguments of that stage's instructions of that kind.
instr() { awk -F '\t' -v s="$1" -v i="$2" '$1 == s && $2 == i { print $3 }' "$T/instr"; }
# has STAGE INSTRUCTION TEXT: one of them is exactly TEXT.
has() { instr "$1" "$2" | grep -qxF -- "$3" || fail "stage $1 has no '$2 $3'"; }

# --- stages --------------------------------------------------------------
stages=$(awk -F '\t' '$2 == "FROM" { print $3 }' "$T/instr" | tr '\n' ';')
[ "$stages" = "debian:bookworm AS build;debian:bookworm-slim AS agent;debian:bookworm-slim AS server;" ] ||
  fail "stages are '$stages'; wanted build (debian:bookworm), agent and server (bookworm-slim, the default, last)"
for stage in agent server; do
  user=$(instr $stage USER | tail -n 1)
  [ -n "$user" ] && [ "$user" != root ] && [ "$user" != 0 ] || fail "stage $stage runs as '$user', not a user of its own"
done
has server VOLUME /var/lib/allot
has server EXPOSE 8080
instr server HEALTHCHECK | grep -q 'curl -fsS http://127.0.0.1:8080/healthz' ||
  fail "the server's HEALTHCHECK does not ask /healthz on port 8080"
instr server CMD | grep -qF '"--listen", "0.0.0.0:8080"' || fail "allotd does not listen on 0.0.0.0:8080"
has agent VOLUME /var/lib/allot-agent

# --- scripts: they exist, and they are CI's -------------------------------
awk -F '\t' '$2 == "RUN" { print $3 }' "$T/instr" | grep -o '[a-zA-Z0-9_./-]*scripts/[a-zA-Z0-9_.-]*' |
  sed 's#.*scripts/#scripts/#' | sort -u >"$T/scripts"
[ -s "$T/scripts" ] || fail "no RUN line calls scripts/"
# what CI runs: the scripts .ci/run names, and those they call in turn
grep -o 'scripts/[a-zA-Z0-9_.-]*' "$SRC/.ci/run" | sort -u >"$T/ci"
while :; do
  for s in $(cat "$T/ci"); do
    [ -f "$SRC/$s" ] && grep -o 'scripts/[a-zA-Z0-9_.-]*' "$SRC/$s" || true
  done | cat - "$T/ci" | sort -u >"$T/ci.new"
  if cmp -s "$T/ci" "$T/ci.new"; then break; fi
  mv "$T/ci.new" "$T/ci"
done
for s in $(cat "$T/scripts"); do
  [ -x "$SRC/$s" ] || fail "the Dockerfile calls $s, which is not an executable file"
  grep -qxF "$s" "$T/ci" || fail "the Dockerfile calls $s, which CI (.ci/run) never runs"
done
for s in install-deps.sh build.sh; do
  grep -qxF "scripts/$s" "$T/ci" || fail "CI no longer runs scripts/$s"
done
grep -q '^\./scripts/install-deps\.sh && \./scripts/test\.sh$' "$SRC/.ci/run" ||
  fail ".ci/run no longer runs './scripts/install-deps.sh && ./scripts/test.sh'"
grep -q '^\./scripts/build\.sh ' "$SRC/scripts/test.sh" || grep -q '^\./scripts/build\.sh$' "$SRC/scripts/test.sh" ||
  fail "scripts/test.sh no longer builds with ./scripts/build.sh"
# the build stage: CI's install and the README's build, word for word
has build RUN ./scripts/install-deps.sh
has build RUN ./scripts/build.sh
has build COPY "scripts/install-deps.sh scripts/install-deps.sh"
if [ -f "$SRC/README.md" ]; then
  grep -qF './scripts/install-deps.sh && ./scripts/build.sh' "$SRC/README.md" ||
    fail "the README no longer builds with ./scripts/install-deps.sh && ./scripts/build.sh"
fi
# the runtime stages: the runtime lists of the same script
for stage in agent server; do
  has $stage COPY "scripts/install-deps.sh /tmp/install-deps.sh"
  instr $stage RUN | grep -q "^/tmp/install-deps.sh --runtime $stage && rm -rf /var/lib/apt/lists/\*" ||
    fail "stage $stage does not install with 'install-deps.sh --runtime $stage'"
  "$SRC/scripts/install-deps.sh" --list --runtime $stage >/dev/null ||
    fail "install-deps.sh has no runtime list for $stage"
done

# --- the install step, for real -------------------------------------------
step=$(instr build RUN | grep 'cmake --install build ' || true)
[ "$(printf '%s\n' "$step" | grep -c .)" = 1 ] || fail "the build stage has no single install step"
printf '%s\n' "$step" | grep -q '/staging/' || fail "the install step does not stage into /staging"
printf '%s\n' "$step" | sed -e "s#/staging/#$T/staging/#g" -e "s#cmake --install build #cmake --install '$BUILD' #g" \
  >"$T/step.sh"
sh -e "$T/step.sh" >"$T/log" 2>&1 || fail "the install step failed: $(cat "$T/step.sh")"
awk -F '\t' '$2 == "COPY" && $3 ~ /^--from=build / { split($3, a, " "); print $1, a[2] }' "$T/instr" |
  while read -r stage from; do
    [ -e "$T$from" ] || fail "stage $stage copies $from, which the install step does not make"
  done
for f in usr/bin/allotd usr/bin/allot usr/share/allot/web/index.html usr/share/allot/openapi.json \
  etc/allot/allotd.conf; do
  [ -e "$T/staging/server/$f" ] || fail "the server image would lack /$f"
done
for f in usr/bin/allot-agent usr/bin/allot; do
  [ -e "$T/staging/agent/$f" ] || fail "the agent image would lack /$f"
done
[ ! -e "$T/staging/server/usr/bin/allot-agent" ] || fail "the server image would hold allot-agent"

# --- the staged server, run as the image runs it -------------------------
entry=$(instr server ENTRYPOINT | tail -n 1)
cmd=$(instr server CMD | tail -n 1)
printf '%s\n%s\n' "$entry" "$cmd" | jq -e 'arrays' >/dev/null 2>&1 ||
  fail "the server's ENTRYPOINT and CMD must be JSON arrays (exec form, so allotd gets SIGTERM)"
[ "$(printf '%s' "$entry" | jq -r '.[0]')" = allotd ] || fail "the server's ENTRYPOINT is not allotd"
mkdir "$T/state"
# the image's argv with its paths inside the staging tree, then the test's own options
printf '%s\n%s\n' "$entry" "$cmd" | jq -r '.[]' | sed -e "s#^/etc/#$T/staging/server/etc/#" \
  -e "1s#^allotd\$#$T/staging/server/usr/bin/allotd#" >"$T/argv"
[ -f "$(sed -n 1p "$T/argv")" ] || fail "no allotd in the staged server"
set --
while IFS= read -r a; do set -- "$@" "$a"; done <"$T/argv"
# the one-off --init run docs/install.md gives, then the image's command
(cd "$T/state" && ALLOT_ADMIN_PASSWORD=dockerfile-test "$@" --db "$T/state/allot.db" --init \
  >"$T/log" 2>&1) || fail "the image's command with --init failed: $(cat "$T/log")"
(cd "$T/state" && ALLOT_ADMIN_PASSWORD=dockerfile-test exec "$@" --db "$T/state/allot.db" \
  --listen 127.0.0.1:0 --port-file "$T/state/port" >>"$T/log" 2>&1) &
PID=$!
wait_port "$T/state/port" "$PID" "the staged allotd"
port=$PORT
hc=$(instr server HEALTHCHECK | sed 's/.* CMD //' | sed "s#127.0.0.1:8080#127.0.0.1:$port#")
sh -c "$hc" >/dev/null 2>&1 || fail "the HEALTHCHECK command fails against the staged allotd: $hc"
curl -fsS "http://127.0.0.1:$port/" >"$T/index.html" || fail "GET / failed"
cmp -s "$T/index.html" "$T/staging/server/usr/share/allot/web/index.html" ||
  fail "the staged allotd does not serve the staged dashboard"
kill -TERM "$PID"
wait "$PID" || fail "the staged allotd exited with status $? after SIGTERM"
PID=""
echo "ok: the Dockerfile's stages, scripts, install step and server"
