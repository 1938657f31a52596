#!/usr/bin/env python3
"""unavailable.py PORTFILE COUNTFILE: an HTTP server on a free loopback port
that answers every request 503 with allotd's error body, as a replica
whose database is unreachable does; it writes its port to PORTFILE and
appends a line to COUNTFILE per request. For the clients' tests of server
lists (they must move on to the next server)."""
import http.server
import json
import sys


class Unavailable(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        with open(sys.argv[2], "a") as f:
            f.write(self.command + " " + self.path + "\n")
        body = json.dumps({"code": 503, "message": "Service unavailable",
                           "details": "the database does not answer"}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Unavailable)
with open(sys.argv[1] + ".new", "w") as f:
    f.write(str(server.server_address[1]) + "\n")
import os
os.rename(sys.argv[1] + ".new", sys.argv[1])
server.serve_forever()
