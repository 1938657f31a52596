#!/bin/sh
# Builds allot in BUILD_DIR (default build/) and runs every test with ctest.
# Extra arguments go to cmake's configure step (e.g. -DALLOT_SANITIZE=ON).
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
./scripts/build.sh "$@"
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j "$(nproc)" --timeout 600
