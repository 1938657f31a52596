#!/bin/sh
# runtime_deps.sh SOURCE_DIR BUILD_DIR: the runtime package lists of
# scripts/install-deps.sh (which the Docker images install) against what the
# built binaries load: each library a binary names (DT_NEEDED), found with
# ldd and traced to its Debian package with dpkg -S, must be in the list of
# the image that ships the binary, and every library package in that list
# must be one of them. libc6 is in every Debian image and need not be listed;
# the lists' other packages (not libraries) must be ones named here.
# Libraries a binary opens with dlopen() count as named: allot opens
# libcurl for https:// servers (DLOPENED).
#   server image: allotd, allot      agent image: allot-agent, allot
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
temp_dir rtdeps
needs readelf ldd dpkg
TOOLS="ca-certificates curl sqlite3"   # TLS roots, the HEALTHCHECK's client, backups
DLOPENED="allot:libcurl4"

# package_of FILE: the Debian package holding FILE (also under the other
# name merged /usr gives it: /lib/... and /usr/lib/..., and its real path).
package_of() {
  for f in "$1" "$(readlink -f "$1")"; do
    case $f in
    /usr/*) alt=${f#/usr} ;;
    *) alt=/usr$f ;;
    esac
    for p in "$f" "$alt"; do
      out=$(dpkg -S "$p" 2>/dev/null | head -n 1) || continue
      [ -n "$out" ] && { printf '%s\n' "${out%%:*}"; return 0; }
    done
  done
  return 1
}

# packages BINARY: the packages of the libraries BINARY names.
packages() {
  [ -x "$1" ] || fail "$1 is not built"
  ldd "$1" >"$T/ldd" 2>&1 || fail "ldd $1: $(cat "$T/ldd")"
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r lib; do
    path=$(awk -v l="$lib" '$1 == l && $2 == "=>" { print $3 }' "$T/ldd")
    [ -n "$path" ] && [ -e "$path" ] || fail "$1 needs $lib, which ldd does not find"
    package_of "$path" || fail "$1 needs $lib ($path), which no Debian package holds"
  done
}

for image in server agent; do
  case $image in
  server) bins="allotd allot" ;;
  agent) bins="allot-agent allot" ;;
  esac
  : >"$T/found"
  for b in $bins; do
    packages "$BUILD/$b" >>"$T/found" || exit 1
    for d in $DLOPENED; do [ "${d%%:*}" != "$b" ] || echo "${d#*:}" >>"$T/found"; done
  done
  grep -vx 'libc6' "$T/found" | sort -u >"$T/needed" || true
  "$SRC/scripts/install-deps.sh" --list --runtime $image | sort -u >"$T/listed"
  for p in $(cat "$T/needed"); do
    grep -qxF "$p" "$T/listed" ||
      fail "the $image image lacks $p, which $bins load: add it to install-deps.sh's runtime list"
  done
  for p in $(cat "$T/listed"); do
    if grep -qxF "$p" "$T/needed"; then continue; fi
    case " $TOOLS " in *" $p "*) continue ;; esac
    fail "install-deps.sh --runtime $image lists $p, which none of $bins loads"
  done
  echo "$image: $(tr '\n' ' ' <"$T/listed")"
done
echo "ok: the runtime lists match the binaries"
