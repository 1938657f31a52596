#!/bin/sh
# static.sh: allotd serving the dashboard's files, checked with curl: the
# content types, the Content-Security-Policy, no directory listing, and no
# way out of the web root (dot segments raw and encoded, backslashes,
# hidden files, symlinks, unknown extensions); a --web-root without
# index.html is refused at start.
# usage: static.sh ALLOTD WEB_ROOT
ALLOTD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WEB=$2
. "$(dirname "$0")/../server/lib.sh"

# a copy of web/ with traps in it
cp -r "$WEB" "$T/web"
echo s3cr3t-c0ntent > "$T/secret.txt"
ln -s "$T/secret.txt" "$T/web/link.txt"
ln -s "$T" "$T/web/up"
echo hidden > "$T/web/.hidden.txt"
echo data > "$T/web/data.db"

# GET PATH: "status content-type" (curl leaves the path as given)
get() { curl -s -o "$T/body" --path-as-is -w '%{http_code} %{content_type}' "$URL$1"; }
want() { # STATUS PATH [TYPE-PREFIX]
  got=$(get "$2")
  case "$got" in
    "$1 ${3:-}"*) ;;
    *) fail "GET $2: $got, wanted $1 ${3:-}" ;;
  esac
}

# a web root without index.html is refused
mkdir "$T/empty"
init_db --db "$T/refused.db"
if (cd "$T" && "$ALLOTD" --listen 127.0.0.1:0 --db "$T/refused.db" --web-root "$T/empty" \
      >"$T/refused.log" 2>&1); then
  fail "allotd started with a web root that has no index.html"
fi
grep -q "no index.html" "$T/refused.log" || fail "no reason given for the refused web root"

start --demo --web-root "$T/web"

want 200 / "text/html"
want 200 /index.html "text/html"
want 200 /app.js "text/javascript"
want 200 /js/api.js "text/javascript"
want 200 /style.css "text/css"
want 200 /vendor/chart.umd.min.js "text/javascript"
cmp -s "$T/body" "$WEB/vendor/chart.umd.min.js" || fail "chart.umd.min.js differs from the file"

H=$(curl -s -D - -o /dev/null "$URL/")
printf '%s' "$H" | grep -qi "^Content-Security-Policy: default-src 'self'" || fail "no strict CSP: $H"
printf '%s' "$H" | grep -qi "^X-Content-Type-Options: nosniff" || fail "no nosniff"
printf '%s' "$H" | grep -qi "^X-Frame-Options: DENY" || fail "no X-Frame-Options"

# no directory listing
for p in /vendor/ /vendor /js/ /js /up/ /up; do want 404 "$p"; done
# nothing outside the web root, however it is spelled
for p in /../secret.txt /%2e%2e/secret.txt /js/../../secret.txt /js/..%2f..%2fsecret.txt \
         /vendor/%2e%2e/%2e%2e/secret.txt /..%5csecret.txt '/js\..\..\secret.txt' \
         //etc/passwd /link.txt /up/secret.txt /.hidden.txt /data.db /nope.js; do
  want 404 "$p"
  ! grep -q s3cr3t-c0ntent "$T/body" || fail "GET $p leaked the secret"
done
# /api/ paths never fall through to files; other methods are not served
want 404 /api/v1/nope "application/json"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/")" = 405 ] || fail "POST / is not 405"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL/app.js")" = 404 ] || fail "DELETE /app.js"

stop
echo "static: ok"
