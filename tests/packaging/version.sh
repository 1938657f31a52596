#!/bin/sh
# version.sh BUILD_DIR VERSION REVISION: every binary's --version says
# "NAME VERSION (git REVISION)", the one version project(VERSION) sets and
# the revision configure found, and exits 0; --help lists --version; the
# OpenAPI file carries the same version.
set -eu
BUILD=$1 VERSION=$2 REVISION=$3 OPENAPI=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -n "$REVISION" ] || fail "no revision (cmake/version.cmake sets \"unknown\" outside git)"
for b in allotd allot allot-agent; do
  out=$("$BUILD/$b" --version 2>&1) || fail "$b --version exited with status $?: $out"
  [ "$out" = "$b $VERSION (git $REVISION)" ] || fail "$b --version says '$out'"
  "$BUILD/$b" --help 2>&1 | grep -q -- '--version' || fail "$b --help does not list --version"
done
v=$(jq -r .info.version "$OPENAPI") || fail "cannot read $OPENAPI"
[ "$v" = "$VERSION" ] || fail "openapi.json says version $v, the project $VERSION"
echo "ok: $VERSION (git $REVISION)"
