#!/bin/sh
# Installs every Debian package allot needs to build, run and test
# (Chromium, Node.js and npm for the dashboard's browser tests).
# One list, used by the README, CI and the Dockerfile.
set -eu
PACKAGES="build-essential cmake pkg-config git ca-certificates curl \
  libjansson-dev libcmocka-dev libsqlite3-dev sqlite3 libcivetweb-dev libjwt-dev \
  libcurl4-openssl-dev libcrypt-dev jq chromium"
# The browser tests run Node.js and npm: a node already on the PATH (e.g. a
# newer one from nodesource) is kept; otherwise Debian's nodejs and npm.
command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs"
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"
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
