#!/bin/sh
# Builds allot in BUILD_DIR (default build/) and runs every test with ctest.
# Extra arguments go to cmake's configure step (e.g. -DALLOT_SANITIZE=ON).
# TEST_JOBS tests run at once (default three times the cores: most tests
# wait on servers, agents and deadlines rather than compute; at two a core
# the cores stayed 62-67% busy and the run took a fifth longer;
# bench/README.md, "The test suite").
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
./scripts/build.sh "$@"
TEST_JOBS=${TEST_JOBS:-$((3 * $(nproc)))}
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j "$TEST_JOBS" --timeout 600
