#!/bin/sh
# e2e_urls.sh: a workspace's exposed port, reached at the URL allotd
# answers (http://NODE:PORT), on allotd and a real agent on loopback; an
# exposedUrls entry that asks for what needs an ingress (a URL of its own,
# access control) is refused with a 400 naming it.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"
command -v python3 >/dev/null || fail "python3 is needed"

start_admin --rate-limit 0
new_agent node-1 --gpus 1 --address 127.0.0.1
ready node-1
P=$(project team-url 1)
PORT=$TEST_PORT   # the test's own (lib_agent.sh)

# workspace NAME EXPOSED: a CPU-only workspace serving HTTP on $PORT
workspace() {
  expect "$3" POST /api/v1/workloads/workspaces "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"python3\",
    \"args\":\"-m http.server $PORT --bind 127.0.0.1\",\"terminationGracePeriodSeconds\":2,
    \"compute\":{\"gpuDevicesRequest\":0},\"exposedUrls\":$2,
    \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}]}}" "$ADMIN"
}
workspace nb "[{\"container\":$PORT,\"toolType\":\"jupyter\",\"toolName\":\"notebook\"}]" 202 >/dev/null
wait_phase_long nb Running
U=$(expect 200 GET "/api/v1/workloads/$(wl_id nb)" "" "$ADMIN" | jq -r '.urls | join(" ")')
[ "$U" = "http://127.0.0.1:$PORT" ] || fail "nb's urls: $U"
until_ok 20 curl -sf -o /dev/null "$U" || fail "$U does not answer"

refused() { # EXPOSED WORDS
  D=$(workspace r "$1" 400 | jq -r .details)
  printf '%s' "$D" | grep -q -F "$2" || fail "$1: the refusal says '$D', not '$2'"
}
refused '[{"container":8888,"url":"https://nb.example.com"}]' "exposedUrls[].url is not supported"
refused '[{"container":8888,"authorizedUsers":["a"]}]' "access control is not supported"
refused '[{"toolType":"jupyter"}]' "container: a port"
expect 202 DELETE "/api/v1/workloads/$(wl_id nb)" "" "$ADMIN" >/dev/null
echo "PASS"
