#!/bin/sh
# Configures and builds allot in BUILD_DIR (default build/): build/allotd,
# build/allot, build/allot-agent. Extra arguments go to cmake's configure
# step (e.g. -DALLOT_SANITIZE=ON).
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
