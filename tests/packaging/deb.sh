#!/bin/sh
# deb.sh BUILD_DIR VERSION: the Debian packages end to end. Builds
# allot-server, allot-agent and allot-cli with cpack, checks their
# dependencies and contents, installs them with dpkg -i, starts the installed
# allotd (as the user the postinst made, with the shipped allotd.conf, a
# temporary database and a free loopback port; not through systemd), checks
# /healthz and the dashboard, logs in with the installed allot, registers an
# installed allot-agent, backs the database up online with sqlite3 and
# restores it as docs/install.md says, stops everything, and purges the
# packages.
#
# It changes the machine (packages, the user allot), so it must run as root
# and refuses to touch allot packages it did not install itself.
. "$(dirname "$0")/lib.sh"
BUILD=$(cd "$1" && pwd)
VERSION=$2
PACKAGES="allot-server allot-agent allot-cli"

[ "$(id -u)" = 0 ] || fail "this test installs .deb packages with dpkg -i and must run as root" \
  "(CI runs as root; run ctest as root, e.g. sudo ctest -R packaging/deb)"
needs cpack dpkg dpkg-shlibdeps curl jq sqlite3 setpriv flock useradd

# One run at a time on a machine: the packages are system-wide.
exec 9>/var/lock/allot-deb-test.lock
flock -w 300 9 || fail "another packaging test holds /var/lock/allot-deb-test.lock"
for p in $PACKAGES; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed\|unpacked\|config-files'; then
    fail "$p is already on this machine; this test installs and purges it, so it stops here"
  fi
done

SERVER_PID="" AGENT_PID="" USER_MADE=1 STATE_MADE=1
if getent passwd allot >/dev/null; then USER_MADE=0; fi
if [ -e /var/lib/allot ]; then STATE_MADE=0; fi

test_cleanup() {
  for pid in $AGENT_PID $SERVER_PID; do
    kill -9 "$pid" 2>/dev/null || true
  done
  # shellcheck disable=SC2086
  dpkg --purge $PACKAGES >/dev/null 2>&1 || true
  if [ "$USER_MADE" = 1 ] && getent passwd allot >/dev/null; then userdel allot 2>/dev/null || true; fi
  if [ "$STATE_MADE" = 1 ]; then rmdir /var/lib/allot 2>/dev/null || true; fi
}
temp_dir deb
chmod 755 "$T"
FAIL_LOG=$T/allotd.log

# --- build ---------------------------------------------------------------
cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$T/pkg" >"$T/cpack.log" 2>&1 ||
  fail "cpack: $(tail -n 20 "$T/cpack.log")"
for p in $PACKAGES; do
  deb=$(ls "$T/pkg/${p}_${VERSION}-"*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || fail "cpack made no $p package: $(ls "$T/pkg")"
  eval "DEB_$(echo "$p" | tr - _)=\$deb"
done

# --- dependencies: what dpkg-shlibdeps found, and the client -------------
# has_dep DEB PACKAGE...: DEB's Depends names every PACKAGE.
has_dep() {
  deps=$(dpkg-deb -f "$1" Depends)
  shift
  for want in "$@"; do
    printf '%s\n' "$deps" | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | grep -qx "$want" ||
      fail "Depends lacks $want: $deps"
  done
}
# shellcheck disable=SC2154
has_dep "$DEB_allot_server" libc6 libsqlite3-0 libjansson4 libjwt0 libcrypt1 libcivetweb1 \
  allot-cli passwd
# shellcheck disable=SC2154
has_dep "$DEB_allot_agent" libc6 libjansson4 libcurl4 allot-cli passwd
# shellcheck disable=SC2154
has_dep "$DEB_allot_cli" libc6 libjansson4 libcurl4
dpkg-deb -f "$DEB_allot_server" Depends | grep -q "allot-cli (= $VERSION-" ||
  fail "allot-server must depend on the same version of allot-cli"

# --- install ---------------------------------------------------------------
# shellcheck disable=SC2086
dpkg -i "$DEB_allot_server" "$DEB_allot_agent" "$DEB_allot_cli" >"$T/dpkg.log" 2>&1 ||
  fail "dpkg -i: $(tail -n 20 "$T/dpkg.log")"
getent passwd allot >/dev/null || fail "the postinst made no user allot"
if [ "$STATE_MADE" = 1 ]; then
  [ "$(stat -c '%U %a' /var/lib/allot 2>/dev/null)" = "allot 750" ] ||
    fail "the postinst made no /var/lib/allot for the user allot (mode 750)"
fi
for f in /usr/bin/allotd /usr/bin/allot /usr/bin/allot-agent /usr/share/allot/web/index.html \
  /usr/share/allot/openapi.json /etc/allot/allotd.conf /etc/allot/agent.conf \
  /usr/lib/systemd/system/allotd.service /usr/lib/systemd/system/allot-agent.service \
  /usr/share/man/man8/allotd.8.gz /usr/share/man/man8/allot-agent.8.gz \
  /usr/share/man/man1/allot.1.gz /usr/share/bash-completion/completions/allot; do
  [ -e "$f" ] || fail "$f is not installed"
done
for b in allotd allot allot-agent; do
  out=$("/usr/bin/$b" --version) || fail "$b --version failed"
  case $out in "$b $VERSION (git "*")") ;; *) fail "$b --version says '$out'" ;; esac
done
dpkg-query -W -f='${Conffiles}\n' allot-server | grep -q '/etc/allot/allotd.conf' ||
  fail "/etc/allot/allotd.conf is not a conffile"
dpkg-query -W -f='${Conffiles}\n' allot-agent | grep -q '/etc/allot/agent.conf' ||
  fail "/etc/allot/agent.conf is not a conffile"
for unit in allotd allot-agent; do
  exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "/usr/lib/systemd/system/$unit.service")
  [ "$exe" = "/usr/bin/$unit" ] || fail "$unit.service runs '$exe'"
  grep -q "^User=allot$" "/usr/lib/systemd/system/$unit.service" || fail "$unit.service: no User=allot"
done
if command -v systemd-analyze >/dev/null 2>&1; then
  out=$(cd / && systemd-analyze verify --man=no /usr/lib/systemd/system/allotd.service \
    /usr/lib/systemd/system/allot-agent.service 2>&1) || fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify: $out"
fi
bash -c '. /usr/share/bash-completion/completions/allot && complete -p allot' >/dev/null 2>&1 ||
  fail "the bash completion does not load"

# --- the installed allotd, as the user allot ------------------------------
# start_server DIR: the installed allotd with the shipped allotd.conf and
# the database DIR/allot.db, on a free loopback port ($URL).
start_server() {
  rm -f "$1/port"
  if [ ! -e "$1/allot.db" ]; then # as docs/install.md says: allotd creates it only on --init
    (cd "$1" && ALLOT_ADMIN_PASSWORD=deb-test-password setpriv --reuid=allot --regid=allot \
      --init-groups -- /usr/bin/allotd --config /etc/allot/allotd.conf --db "$1/allot.db" \
      --init >>"$T/allotd.log" 2>&1) || fail "allotd --init failed"
  fi
  (cd "$1" && ALLOT_ADMIN_PASSWORD=deb-test-password exec setpriv --reuid=allot \
    --regid=allot --init-groups -- /usr/bin/allotd --config /etc/allot/allotd.conf \
    --db "$1/allot.db" --listen 127.0.0.1:0 --port-file "$1/port" \
    --schedule-period-ms 200 >>"$T/allotd.log" 2>&1) &
  SERVER_PID=$!
  wait_port "$1/port" "$SERVER_PID" "the installed allotd"
  URL="http://127.0.0.1:$PORT"
}
stop_server() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || fail "allotd exited with status $? after SIGTERM"
  SERVER_PID=""
}
# admin_token: an access token of admin.
admin_token() {
  curl -fsS -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
    -d '{"grantType":"password","username":"admin","password":"deb-test-password"}' |
    jq -er .accessToken
}

mkdir "$T/state" "$T/agent" "$T/restored"
chown allot:allot "$T/state" "$T/agent" "$T/restored"
start_server "$T/state"
curl -fsS "$URL/healthz" >"$T/health" || fail "GET /healthz failed"
curl -fsS "$URL/" >"$T/index.html" || fail "GET / failed"
cmp -s "$T/index.html" /usr/share/allot/web/index.html ||
  fail "GET / is not the installed dashboard (/usr/share/allot/web/index.html)"
[ "$(stat -c %U "$T/state/allot.db.key")" = allot ] || fail "the key is not the user allot's"
for f in allot.db allot.db-wal allot.db-shm; do
  [ "$(stat -c '%U %a' "$T/state/$f")" = "allot 600" ] ||
    fail "$f is $(stat -c '%U %a' "$T/state/$f"), not the user allot's with mode 600"
done

# --- the installed allot -----------------------------------------------------
export ALLOT_CONFIG="$T/cli.json" ALLOT_CONNECT_TIMEOUT=2 ALLOT_TIMEOUT=10
echo deb-test-password | /usr/bin/allot login --url "$URL" --user admin --password-stdin \
  >"$T/cli.log" 2>&1 || fail "allot login: $(cat "$T/cli.log")"
/usr/bin/allot whoami >"$T/cli.log" 2>&1 || fail "allot whoami: $(cat "$T/cli.log")"
ADMIN=$(admin_token) || fail "cannot log in with curl"

# --- the installed allot-agent, as the user allot -------------------------
curl -fsS -X POST "$URL/api/v1/agent/tokens" -H "Authorization: Bearer $ADMIN" \
  -H 'Content-Type: application/json' -d '{"name":"deb-test"}' | jq -r .token >"$T/agent.token" ||
  fail "cannot make an agent token"
chown allot:allot "$T/agent.token"
chmod 600 "$T/agent.token"
(exec setpriv --reuid=allot --regid=allot --init-groups -- /usr/bin/allot-agent \
  --server "$URL" --token-file "$T/agent.token" --name deb-test-node --gpus 1 \
  --runtime none --heartbeat-ms 200 --work-dir "$T/agent" >"$T/agent.log" 2>&1) &
AGENT_PID=$!
i=0
until /usr/bin/allot node list --no-headers 2>/dev/null | grep -q '^deb-test-node  *Ready'; do
  i=$((i + 1)); [ $i -lt 150 ] || fail "the installed agent's node is not Ready: $(cat "$T/agent.log")"
  kill -0 "$AGENT_PID" 2>/dev/null || fail "the installed agent exited: $(cat "$T/agent.log")"
  sleep 0.1
done
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || fail "allot-agent exited with status $? after SIGTERM"
AGENT_PID=""

# --- back up while it runs, stop, restore (docs/install.md) ----------------
sqlite3 "$T/state/allot.db" ".backup '$T/backup.db'" || fail "sqlite3 .backup failed"
[ "$(sqlite3 "$T/backup.db" 'PRAGMA integrity_check')" = ok ] || fail "the backup is not sound"
stop_server
install -o allot -g allot -m 0600 "$T/backup.db" "$T/restored/allot.db"
install -o allot -g allot -m 0600 "$T/state/allot.db.key" "$T/restored/allot.db.key"
start_server "$T/restored"
ADMIN=$(admin_token) || fail "cannot log in to the restored database"
curl -fsS "$URL/api/v1/agent/tokens" -H "Authorization: Bearer $ADMIN" | grep -q '"deb-test"' ||
  fail "the restored database lacks the agent token made before the backup"
stop_server

# --- purge -----------------------------------------------------------------
# shellcheck disable=SC2086
dpkg --purge $PACKAGES >"$T/dpkg.log" 2>&1 || fail "dpkg --purge: $(tail -n 20 "$T/dpkg.log")"
for f in /usr/bin/allotd /usr/bin/allot /usr/bin/allot-agent /usr/share/allot /etc/allot; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
echo "ok: $PACKAGES $VERSION built, installed, run and purged"
