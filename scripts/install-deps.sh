#!/bin/sh
# Installs every Debian package allot needs to build, run and test.
# One list, used by the README, CI and the Dockerfile.
set -eu
PACKAGES="build-essential cmake pkg-config git ca-certificates curl \
  libjansson-dev libcmocka-dev libsqlite3-dev sqlite3 libcivetweb-dev libjwt-dev \
  libcurl4-openssl-dev libcrypt-dev jq"
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
