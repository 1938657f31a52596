#!/bin/sh
# run.sh: runs the dashboard's browser test: installs playwright-core from
# the lockfile into OUT (the build folder) when it is missing or stale, from
# npm's cache first, then runs dashboard.test.mjs with node --test against
# the allotd binary given (and allot-agent with the fake NVML library, for
# a node whose GPUs are measured). Screenshots land in OUT/screenshots.
# The browser is CHROMIUM, by default Debian's chromium-headless-shell
# (Chromium's own headless build of the same version: the same Blink, about
# a quarter less CPU than the full browser run headless), else chromium.
# usage: run.sh ALLOTD WEB_ROOT OUT AGENT FAKE_NVML
set -eu
ALLOTD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WEB_ROOT=$(cd "$2" && pwd)
mkdir -p "$3"
OUT=$(cd "$3" && pwd)
AGENT=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
FAKE_NVML=$(cd "$(dirname "$5")" && pwd)/$(basename "$5")
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${CHROMIUM:-}" ]; then
  CHROMIUM=/usr/bin/chromium-headless-shell
  [ -x "$CHROMIUM" ] || CHROMIUM=/usr/bin/chromium
fi

need() { echo "browser test: $1 (scripts/install-deps.sh installs it)" >&2; exit 1; }
command -v node >/dev/null 2>&1 || need "node is missing"
command -v npm >/dev/null 2>&1 || need "npm is missing"
[ -x "$CHROMIUM" ] || need "$CHROMIUM is missing (Debian package chromium-headless-shell or chromium)"

if [ ! -f "$OUT/node_modules/playwright-core/package.json" ] ||
   ! cmp -s "$HERE/package-lock.json" "$OUT/package-lock.json"; then
  cp "$HERE/package.json" "$HERE/package-lock.json" "$OUT/"
  (cd "$OUT" && { npm ci --offline --no-audit --no-fund --loglevel=error 2>/dev/null ||
                  npm ci --prefer-offline --no-audit --no-fund --loglevel=error; })
fi
rm -rf "$OUT/screenshots"
ALLOTD=$ALLOTD ALLOT_WEB_ROOT=$WEB_ROOT ALLOT_BROWSER_OUT=$OUT CHROMIUM=$CHROMIUM \
  ALLOT_AGENT=$AGENT ALLOT_FAKE_NVML_LIB=$FAKE_NVML \
  exec node --test --test-timeout=$((540000 * ${ALLOT_TEST_SCALE:-1})) --test-reporter=spec \
  "$HERE/dashboard.test.mjs"
