#!/usr/bin/env python3
"""runai_schema.py: checks recorded allotd replies against Run:ai's OpenAPI
document (../shared/reference/runai-openapi.json beside the checkout, not
part of allot: NVIDIA's licence), the contract of every path allot
shares with Run:ai.

    runai_schema.py DOC EXCHANGES... [--cover ALLOT-SPEC]

EXCHANGES are files written by tests/server/lib.sh: records that start with
a line "\\036METHOD PATH STATUS" followed by the reply's body. For each:

  Step 1: find the document's operation: the path template that matches,
          the most specific one first (a fixed segment beats a {param}, so
          /workloads/count is never taken for /workloads/{workloadId}).
          Paths and methods the document lacks are allot's own (agent
          routes, /healthz, ...): not checked here; nor is a reply that
          allot's openapi/openapi.json marks as its extension of the
          operation: a response "x-allot-extension": PARAM of that status,
          to a request whose query uses PARAM (dryRun=true's 200).
  Step 2: the status must be one the operation lists (or its "default"),
          except 413 and 429, which the HTTP layer answers before any
          operation runs, 500 and 507 (storage failed, disk full), 501 for
          an operation allotd does not implement,
          401 on an operation the document secures with
          bearerAuth (a missing or void token), and a 400 to a request the
          document itself
          forbids (a query parameter outside its schema: limit=100000
          where the maximum is 500, a filterBy field not in its pattern;
          a query parameter the operation does not list at all; or
          one no server has to take: a malformed %-escape, a control
          character, a value over 1,023 bytes);
          those must still be an Error body.
  Step 3: where the document gives a JSON schema for that status, the body
          must validate: $refs resolved, OpenAPI 3.0 `nullable`, enums,
          required fields, patterns, and the formats uuid, date-time, int32
          and int64. An integer must be written as one (2, not 2.0): typed
          clients refuse 2.0 for an int.

Allot's documented extensions of the document's enums (ENUM_EXTENSIONS:
a node pool's CPU placementStrategy may also be `fragmentation`, allot's
own strategy, docs/scheduler.md) are added to those enums before checking;
a GPU placement that is allot's default (fragmentation) is answered null,
so a pool whose CPU placement never opts in answers only Run:ai's words.

--cover ALLOT-SPEC also fails unless every operation of allot's own
openapi.json that the document shares was answered with a 2xx at least once,
or, one marked "x-allot-refused" (a kind of asset allot cannot run), with
its refusal, a 4xx (the dedicated flow, tests/server/e2e_runai.sh, uses it).

Failures print one line per distinct problem (operation, status, field,
rule), with a count and the first offending value, and the exit status is 1.
"""
import json
import os
import re
import sys
import urllib.parse

import jsonschema

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from openapi_ref import deref  # noqa: E402

METHODS = ("get", "put", "post", "delete", "patch")
TRANSPORT_STATUSES = ("413", "429", "500", "501", "507")

# component schema -> values allot adds to its enum (see the docstring)
ENUM_EXTENSIONS = {"PlacementStrategy": ["fragmentation"]}

QUERY_VALUE_MAX = 1023
BAD_ESCAPE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{12}$")
DATE_TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([zZ]|[+-]\d\d:\d\d)$")


def to_json_schema(s):
    """An OpenAPI 3.0 schema object as JSON Schema draft 4: `nullable`
    becomes "or null"; the OpenAPI-only keywords go."""
    if isinstance(s, list):
        return [to_json_schema(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k in ("nullable", "example", "discriminator", "xml", "externalDocs",
                 "deprecated", "readOnly", "writeOnly") or k.startswith("x-"):
            continue
        if k == "properties":
            out[k] = {name: to_json_schema(p) for name, p in v.items()}
        elif k in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[k] = to_json_schema(v)
        else:
            out[k] = v
    if s.get("writeOnly") is True:
        out = {}
    if isinstance(out.get("required"), list) and isinstance(s.get("properties"), dict):
        # writeOnly properties are never in replies
        out["required"] = [r for r in out["required"]
                           if not s["properties"].get(r, {}).get("writeOnly")]
        if not out["required"]:
            del out["required"]
    if s.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


def format_checker():
    fc = jsonschema.FormatChecker(formats=())

    def only(kind, test):
        return lambda v: not isinstance(v, kind) or isinstance(v, bool) or test(v)

    fc.checks("uuid")(only(str, lambda v: UUID_RE.match(v) is not None))
    fc.checks("date-time")(only(str, lambda v: DATE_TIME_RE.match(v) is not None))
    fc.checks("int32")(only(int, lambda v: -2**31 <= v < 2**31))
    fc.checks("int64")(only(int, lambda v: -2**63 <= v < 2**63))
    return fc


def extension_replies(allot_path):
    """{(METHOD, template): {status: PARAM}}: the replies allot's document
    marks as its extensions of an operation; empty if there is none."""
    out = {}
    if not os.path.exists(allot_path):
        return out
    with open(allot_path, encoding="utf-8") as f:
        allot = json.load(f)
    for template, item in allot["paths"].items():
        for method, op in item.items():
            if method not in METHODS:
                continue
            for status, reply in op.get("responses", {}).items():
                param = reply.get("x-allot-extension")
                if isinstance(param, str):
                    out.setdefault((method.upper(), template), {})[status] = param
    return out


class Document:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = json.load(f)
        # allot's own document: the repository's (Run:ai's lies outside it)
        self.extensions = extension_replies(os.environ.get("ALLOT_OPENAPI") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "openapi", "openapi.json"))
        for name, extra in ENUM_EXTENSIONS.items():
            self.doc["components"]["schemas"][name]["enum"] += extra
        self.schemas = {"components": {"schemas": {
            name: to_json_schema(s) for name, s in self.doc["components"]["schemas"].items()}}}
        self.templates = []
        for template in self.doc["paths"]:
            segs = template.strip("/").split("/")
            self.templates.append((template, segs))
        self.fc = format_checker()
        self.validators = {}

    def operation(self, method, path):
        """(template, operation or None); template None if no path matches."""
        segs = path.split("?", 1)[0].strip("/").split("/")
        best, best_key = None, None
        for template, tsegs in self.templates:
            if len(tsegs) != len(segs):
                continue
            key = []
            for t, s in zip(tsegs, segs):
                if t.startswith("{"):
                    key.append(1)
                elif t == s:
                    key.append(0)
                else:
                    break
            else:
                if best_key is None or key < best_key:
                    best, best_key = template, key
        if best is None:
            return None, None
        return best, self.doc["paths"][best].get(method.lower())

    def deref(self, obj):
        return deref(self.doc, obj)

    def validator(self, schema):
        key = json.dumps(schema, sort_keys=True)
        v = self.validators.get(key)
        if v is None:
            root = dict(to_json_schema(schema))
            root["components"] = self.schemas["components"]
            v = jsonschema.Draft4Validator(root, format_checker=self.fc)
            self.validators[key] = v
        return v

    def query_refused(self, template, op, path):
        """Why the document forbids the request's query, or None. Below any
        schema: a value must decode (no malformed %-escape), hold no control
        character (NUL included) and be at most 1,023 bytes decoded."""
        params = list(self.doc["paths"][template].get("parameters", []))
        params += op.get("parameters", [])
        raw = path.partition("?")[2]
        if BAD_ESCAPE_RE.search(raw):
            return "a malformed %-escape in the query"
        query = urllib.parse.parse_qsl(raw, keep_blank_values=True)
        for name, text in query:
            if CONTROL_RE.search(text) or len(text.encode()) > QUERY_VALUE_MAX:
                return "%s: a control character, or longer than %d bytes" % (name, QUERY_VALUE_MAX)
        listed = {p.get("name") for p in (self.deref(p) for p in params) if p.get("in") == "query"}
        for name, _ in query:
            if name not in listed:
                return "%s is not a query parameter of this operation" % name
        for p in (self.deref(p) for p in params):
            if p.get("in") != "query" or "schema" not in p:
                continue
            schema = self.deref(p["schema"])
            for name, text in query:
                if name != p["name"]:
                    continue
                value = text
                kind = schema.get("type")
                if kind == "array" and p.get("explode") is False:
                    value = text.split(",")
                elif kind == "array":
                    value = [text]
                elif kind == "integer":
                    try:
                        value = int(text)
                    except ValueError:
                        return "%s=%s is not an integer" % (name, text)
                elif kind == "boolean":
                    if text not in ("true", "false"):
                        return "%s=%s is not a boolean" % (name, text)
                    continue
                err = jsonschema.exceptions.best_match(
                    self.validator(schema).iter_errors(value))
                if err is not None:
                    return "%s=%s: %s" % (name, text, err.message)
        return None

    def extension_reply(self, method, template, path, status):
        """Is this reply one of allot's extensions (its status marked, its
        parameter in the request's query)?"""
        param = self.extensions.get((method.upper(), template), {}).get(status)
        query = urllib.parse.parse_qsl(path.partition("?")[2], keep_blank_values=True)
        return param is not None and any(name == param for name, _ in query)

    def secured(self, op):
        """Does the operation need a bearer token (its own or the default)?"""
        return bool(op.get("security", self.doc.get("security")))

    def reply_schema(self, op, status):
        """(listed, schema or None) for a status of an operation."""
        responses = op.get("responses", {})
        if status in responses:
            reply = self.deref(responses[status])
        elif "default" in responses:
            reply = self.deref(responses["default"])
        elif status in TRANSPORT_STATUSES or (status == "401" and self.secured(op)):
            return True, {"$ref": "#/components/schemas/Error"}
        else:
            return False, None
        for ctype, media in (reply.get("content") or {}).items():
            if "json" in ctype and "schema" in media:
                return True, media["schema"]
        return True, None


def read_exchanges(path):
    """Yields (method, path, status, body) from a file lib.sh wrote."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for rec in text.split("\x1e")[1:]:
        head, _, body = rec.partition("\n")
        parts = head.split(" ")
        if len(parts) != 3:
            continue
        yield parts[0], parts[1], parts[2], body.rstrip("\n")


def pointer(path):
    return "/" + "/".join("[]" if isinstance(p, int) else str(p) for p in path)


def check(doc, exchanges):
    """Returns ({problem: [count, example]}, {(METHOD, template): statuses})."""
    problems, seen = {}, {}

    def problem(key, example):
        p = problems.setdefault(key, [0, example])
        p[0] += 1

    for method, path, status, body in exchanges:
        template, op = doc.operation(method, path)
        if op is None or doc.extension_reply(method, template, path, status):
            continue
        seen.setdefault((method.upper(), template), set()).add(status)
        where = "%s %s %s" % (method.upper(), template, status)
        listed, schema = doc.reply_schema(op, status)
        if not listed and status == "400" and doc.query_refused(template, op, path):
            listed, schema = True, {"$ref": "#/components/schemas/Error"}
        if not listed:
            problem("%s: status not listed (the document lists %s)" %
                    (where, ", ".join(sorted(op.get("responses", {})))), path)
            continue
        if schema is None:
            continue
        try:
            value = json.loads(body)
        except ValueError:
            problem("%s: the body is not JSON" % where, "%s: %r" % (path, body[:200]))
            continue
        name = schema.get("$ref", "inline").rsplit("/", 1)[-1]
        for err in doc.validator(schema).iter_errors(value):
            # anyOf (nullable) hides the real cause: report the deepest
            while err.context:
                err = max(err.context, key=lambda e: len(e.absolute_path))
            rule = err.message if err.validator == "required" else "%s %s" % (
                err.validator, json.dumps(err.validator_value)[:120])
            problem("%s (%s) at %s: %s" % (where, name, pointer(err.absolute_path), rule),
                    "%s: %s" % (path, json.dumps(err.instance)[:200]))
    return problems, seen


def coverage(doc, allot_spec_path, seen):
    """The operations allot documents and Run:ai shares that no 2xx answered."""
    with open(allot_spec_path, encoding="utf-8") as f:
        allot = json.load(f)
    missing = []
    for template, item in allot["paths"].items():
        for method in item:
            if method not in METHODS:
                continue
            shared, op = doc.operation(method, template)
            if op is None or shared is None:
                continue
            # an operation allot routes only to refuse ("x-allot-refused":
            # why) must have answered its refusal (400 to create, 404 for an
            # asset that cannot exist) instead
            want = "4" if item[method].get("x-allot-refused") else "2"
            ok = any(s.startswith(want) for s in seen.get((method.upper(), shared), ()))
            if not ok:
                missing.append("%s %s" % (method.upper(), shared))
    return missing


def main(argv):
    cover = None
    if "--cover" in argv:
        i = argv.index("--cover")
        cover = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    doc = Document(argv[0])
    exchanges = []
    for path in argv[1:]:
        exchanges.extend(read_exchanges(path))
    problems, seen = check(doc, exchanges)
    for key in sorted(problems):
        count, example = problems[key]
        print("schema: %s [%d x; first: %s]" % (key, count, example), file=sys.stderr)
    missing = coverage(doc, cover, seen) if cover else []
    for m in missing:
        print("schema: %s never answered 2xx" % m, file=sys.stderr)
    checked = sum(1 for m, p, s, b in exchanges if doc.operation(m, p)[1] is not None)
    print("schema: %d replies checked (%d operations), %d problems" %
          (checked, len(seen), len(problems) + len(missing)))
    return 1 if problems or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
