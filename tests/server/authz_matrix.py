#!/usr/bin/env python3
"""authz_matrix.py: the cells of the authorization matrix (authz_matrix.txt),
sent to a running allotd that authz_matrix.sh set up, each checked against
the status the table wants.

    authz_matrix.py TABLE OUT-DIR

The cast comes in the environment: URL; ADMIN; TOK_<role> for every role
of ROLES ("-": no token); PA PB (projects team-a, team-b), DA DB (their
departments), WSA WSB (a workload that stays in each), PODA PODB (its
first pod), POOL (the default node pool).

For each row (in four threads, row j in thread j % 4, as four shell jobs
did before: fixture names never collide), each side (own: team-a, other:
team-b), each role in order:
  Step 1: the fixture: with FIXTURE W, Q, U or R, the admin makes a fresh
          one in the side's project or department, unless the cell wants a
          refusal (>= 400) and the last cell of the thread used a fixture
          of that kind and project, which a refusal leaves as it was;
  Step 2: {P} {D} {WS} {WSPOD} {W} {Q} {U} {R} {UN} {N} {POOL} put into the
          path and the body ({WSPOD} only into the path);
  Step 3: the call, with the role's token, on a connection of its own;
  Step 4: the status compared with the table's; the exchange appended to
          OUT-DIR/exchanges.<thread> in lib.sh's record format, for the
          schema check of Run:ai's document.
A cell that wants less than 400 may have used its fixture up: the next
refusal gets a fresh one.

Prints "CELLS BAD" and, on stderr, one MISMATCH line per cell that
differs; exits 1 (FAIL on stderr) when anything else went wrong: a fixture
that could not be made, any error in a thread, or fewer cells checked than
the rows hold.
"""
import http.client
import json
import os
import sys
import threading
import urllib.parse

ROLES = "admin deptadmin editor researcher mleng viewer norule anon mixed".split()
JOBS = 4


class FixtureFailed(Exception):
    pass


class Driver:
    """One thread's rows: its fixture counter, its last fixture, its
    exchanges file."""

    def __init__(self, job, env, out_dir):
        self.env = env
        self.n = job * 100000
        self.last = ""
        self.fx = ""
        self.un = ""
        self.cells = 0
        self.bad = []
        self.exchanges = open(os.path.join(out_dir, "exchanges.%d" % job), "ab")

    # ---- HTTP ----
    def call(self, method, path, token, body):
        """The status as three digits ("000": no reply) and the body."""
        url = urllib.parse.urlsplit(self.env["URL"])
        headers = {"Connection": "close"}
        if token != "-":
            headers["Authorization"] = "Bearer " + token
        data = None
        if body:
            headers["Content-Type"] = "application/json"
            data = body.encode()
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        try:
            conn.request(method, path, body=data, headers=headers)
            reply = conn.getresponse()
            status, text = "%03d" % reply.status, reply.read()
        except (OSError, http.client.HTTPException):
            return "000", b""
        finally:
            conn.close()
        self.exchanges.write(b"\036%s %s %s\n" % (method.encode(), path.encode(), status.encode())
                             + text + b"\n")
        return status, text

    def expect(self, want, method, path, body):
        status, text = self.call(method, path, self.env["ADMIN"], body)
        if status != str(want):
            raise FixtureFailed("%s %s: status %s, wanted %d: %s" %
                                (method, path, status, want, text[:400].decode("utf-8", "replace")))
        return json.loads(text)

    # ---- Step 1 ----
    def user(self, email):
        self.expect(201, "POST", "/api/v1/users", json.dumps({"email": email}))

    def fixture(self, kind, project, department, want):
        self.n += 1
        if kind != "-" and want >= 400 and self.last == kind + project:
            return
        self.last = kind + project
        self.fx = ""
        self.un = "u%d@example.com" % self.n
        # ids as jq -r writes them: a number's digits, a string's text
        if kind == "W":
            self.fx = str(self.workload(project))
        elif kind == "Q":
            self.fx = str(self.expect(201, "POST", "/api/v1/org-unit/projects", json.dumps(
                {"name": "q%d" % self.n, "parentId": department, "resources": []}))["id"])
        elif kind == "U":
            self.user(self.un)
            users = self.expect(200, "GET", "/api/v1/users", "")
            self.fx = str(next(u["id"] for u in users if u["username"] == self.un))
        elif kind == "R":
            self.user(self.un)
            self.fx = str(self.expect(201, "POST", "/api/v1/authorization/access-rules", json.dumps(
                {"subjectId": self.un, "subjectType": "user", "roleId": 6,
                 "scopeType": "project", "scopeId": project}))["id"])

    def workload(self, project):
        self.n += 1
        return self.expect(202, "POST", "/api/v1/workloads/trainings", json.dumps(
            {"name": "f%d" % self.n, "projectId": project, "spec": {}}))["workloadId"]

    # ---- Step 2 ----
    def subst(self, text, project, department, standing, pod=""):
        for key, value in (("{WSPOD}", pod), ("{P}", project), ("{D}", department),
                           ("{WS}", standing), ("{W}", self.fx), ("{Q}", self.fx),
                           ("{U}", self.fx), ("{R}", self.fx), ("{UN}", self.un),
                           ("{N}", str(self.n)), ("{POOL}", self.env["POOL"])):
            text = text.replace(key, value)
        return text

    # ---- one side of a row ----
    def check(self, fx, method, path, body, side, wants):
        e = self.env
        if side == "own":
            p, d, ws, wp = e["PA"], e["DA"], e["WSA"], e["PODA"]
        else:
            p, d, ws, wp = e["PB"], e["DB"], e["WSB"], e["PODB"]
        for role, want in zip(ROLES, wants):
            want = int(want)
            self.fixture(fx, p, d, want)
            data = "" if body == "-" else self.subst(body, p, d, ws)
            url = self.subst(path, p, d, ws, wp) if "{" in path else path
            got, _ = self.call(method, url, e["TOK_" + role], data)
            self.cells += 1
            if want < 400:
                self.last = ""
            if got != str(want):
                self.bad.append("MISMATCH: %s %s %s (%s project): got %s, want %d" %
                                (role, method, path, side, got, want))

    def run(self, rows, job):
        for j, row in enumerate(rows, 1):
            if j % JOBS != job:
                continue
            f = row.split()
            if len(f) != 4 + 9 + 1 + 9 or f[13] != "|":
                self.bad.append("MISMATCH: bad row: %s" % " ".join(f[:3]))
                continue
            fx, method, path, body = f[:4]
            self.check(fx, method, path, body, "own", f[4:13])
            self.check(fx, method, path, body, "other", f[14:23])
        self.exchanges.close()


def main():
    table, out_dir = sys.argv[1], sys.argv[2]
    rows = [line for line in open(table)
            if not line.startswith("#") and line.strip()]
    drivers = [Driver(job, os.environ, out_dir) for job in range(JOBS)]
    failed = []

    def run(d, job):
        try:
            d.run(rows, job)
        except Exception as e:  # noqa: BLE001 (any error fails the table)
            failed.append("%s: %s" % (type(e).__name__, e))

    threads = [threading.Thread(target=run, args=(d, job)) for job, d in enumerate(drivers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for d in drivers:
        for line in d.bad:
            print(line, file=sys.stderr)
    if failed:
        print("FAIL: " + "; ".join(failed), file=sys.stderr)
        return 1
    cells = sum(d.cells for d in drivers)
    # a bad row is a MISMATCH of its own and checks no cell
    bad_rows = sum(1 for d in drivers for line in d.bad if "bad row" in line)
    if cells != 2 * len(ROLES) * (len(rows) - bad_rows):
        print("FAIL: %d cells checked of %d rows" % (cells, len(rows)), file=sys.stderr)
        return 1
    print(cells, sum(len(d.bad) for d in drivers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
