#!/bin/sh
# Installs the Debian packages allot needs: the one package list, used by
# the README, CI and the Dockerfile.
#
#   install-deps.sh                   everything to build, package and test
#                                     (Chromium, Node.js and npm for the
#                                     dashboard's browser tests; clang and its
#                                     libFuzzer runtime for tests/fuzz;
#                                     python3-torch and Open MPI for the
#                                     distributed workloads' tests)
#   install-deps.sh --runtime server  what allotd and allot load at run time,
#                                     plus curl (the health check) and
#                                     sqlite3 (online backups)
#   install-deps.sh --runtime agent   what allot-agent and allot load
#   install-deps.sh --list [...]      print the list instead of installing
#
# tests/packaging/runtime_deps.sh checks the runtime lists against the
# libraries the built binaries link.
set -eu
PACKAGES="build-essential cmake pkg-config git ca-certificates curl \
  libjansson-dev libcmocka-dev libsqlite3-dev sqlite3 libcivetweb-dev libjwt-dev \
  libcurl4-openssl-dev libcrypt-dev libssl-dev jq gojq chromium chromium-headless-shell dpkg-dev \
  file groff-base wrk \
  python3 python3-jsonschema clang libclang-rt-14-dev postgresql-15 libpq-dev procps \
  python3-torch python3-mpi4py openmpi-bin"
RUNTIME_SERVER="libjansson4 libsqlite3-0 libpq5 libcivetweb1 libjwt0 libcrypt1 libssl3 libcurl4 \
  ca-certificates curl sqlite3"
RUNTIME_AGENT="libjansson4 libcurl4 libssl3 ca-certificates"

list=0
if [ "${1:-}" = --list ]; then list=1; shift; fi
case "${1:-}" in
"") # The browser tests run Node.js and npm: a node already on the PATH
    # (e.g. a newer one from nodesource) is kept; otherwise Debian's.
    command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs"
    command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm" ;;
--runtime)
    case "${2:-}" in
    server) PACKAGES=$RUNTIME_SERVER ;;
    agent) PACKAGES=$RUNTIME_AGENT ;;
    *) echo "usage: $0 [--list] [--runtime server|agent]" >&2; exit 2 ;;
    esac ;;
*) echo "usage: $0 [--list] [--runtime server|agent]" >&2; exit 2 ;;
esac
if [ "$list" = 1 ]; then
  # shellcheck disable=SC2086
  printf '%s\n' $PACKAGES
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
