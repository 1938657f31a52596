#!/usr/bin/env python3
"""openapi_subset.py: openapi/openapi.json is a subset of Run:ai's OpenAPI
document (../shared/reference/runai-openapi.json beside the checkout, or
ALLOT_RUNAI_OPENAPI; NVIDIA's document is not part of allot) on every path they share.

    openapi_subset.py ROOT

For every operation of allot's document whose path template and method are
in Run:ai's, field by field, with $refs resolved in each document:
  - the path template is Run:ai's (same parameter names);
  - each parameter allot lists is one of Run:ai's (same name, place,
    required flag and schema), and every path parameter is there;
  - each status allot lists is one Run:ai's operation lists, with the same
    response (its schema, per media type), except 401, 413, 429, 500, 501
    and 507, which any operation may answer (allot's Error);
  - the request body is Run:ai's.
Descriptions, summaries and examples may differ. Operations and paths only
allot has are its extensions: they are listed, not checked; so are a shared
operation's query and header parameters and responses marked
"x-allot-extension" (dryRun=true on a submission and its 200, the
Idempotency-Key header of a submission), which must not take a name or a
status Run:ai's operation has. Last, the
files scripts/openapi-sync.py writes must be current (--check).
"""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from openapi_ref import deref  # noqa: E402

METHODS = ("get", "put", "post", "delete", "patch")
ANY_OPERATION = ("401", "413", "429", "500", "501", "507")
TEXT = ("description", "summary", "example", "examples")


def norm(path):
    return re.sub(r"\{[^}]*\}", "{}", path)


class Doc:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.d = json.load(f)

    def deref(self, obj):
        return deref(self.d, obj)


def same(a_doc, a, b_doc, b, where, out, seen):
    """Appends to out where a (in a_doc) and b (in b_doc) differ."""
    if isinstance(a, dict) and "$ref" in a and isinstance(b, dict) and "$ref" in b:
        key = (a["$ref"], b["$ref"])
        if key in seen:
            return
        seen.add(key)
    a, b = a_doc.deref(a), b_doc.deref(b)
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in TEXT:
                continue
            if k not in a or k not in b:
                out.append("%s: %s only in %s" % (where, k, "allot's" if k in a else "Run:ai's"))
                continue
            same(a_doc, a[k], b_doc, b[k], where + "/" + k, out, seen)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append("%s: %d items, Run:ai's has %d" % (where, len(a), len(b)))
            return
        for i, (x, y) in enumerate(zip(a, b)):
            same(a_doc, x, b_doc, y, "%s/%d" % (where, i), out, seen)
    elif a != b:
        out.append("%s: %r, Run:ai's %r" % (where, a, b))


def params_of(doc, path, op):
    out = {}
    for p in doc.d["paths"][path].get("parameters", []) + op.get("parameters", []):
        p = doc.deref(p)
        out[(p["name"], p["in"])] = p
    return out


def check_operation(allot, runai, path, tmpl, method, out, extensions):
    mine, theirs = allot.d["paths"][path][method], runai.d["paths"][tmpl][method]
    where = "%s %s" % (method.upper(), path)
    seen = set()
    if path != tmpl:
        out.append("%s: Run:ai's template is %s" % (where, tmpl))
    p_mine, p_theirs = params_of(allot, path, mine), params_of(runai, tmpl, theirs)
    for key, p in p_mine.items():
        if p.get("x-allot-extension") is True and key[1] in ("query", "header"):
            if key in p_theirs:
                out.append("%s: extension parameter %s is Run:ai's" % (where, key[0]))
            extensions.append("%s ?%s" % (where, key[0]))
        elif key not in p_theirs:
            out.append("%s: parameter %s (%s) is not Run:ai's" % (where, key[0], key[1]))
        else:
            same(allot, p, runai, p_theirs[key], "%s parameter %s" % (where, key[0]), out, seen)
    for key in p_theirs:
        if key[1] == "path" and key not in p_mine:
            out.append("%s: path parameter %s missing" % (where, key[0]))
    for status, reply in mine.get("responses", {}).items():
        ext = allot.deref(reply).get("x-allot-extension")
        if ext:
            if status in theirs["responses"] or \
                    not (p_mine.get((ext, "query")) or {}).get("x-allot-extension"):
                out.append("%s: extension status %s is Run:ai's or names no extension parameter"
                           % (where, status))
            continue
        if status not in theirs["responses"]:
            if status not in ANY_OPERATION:
                out.append("%s: status %s is not in Run:ai's operation" % (where, status))
            continue
        a, b = allot.deref(reply), runai.deref(theirs["responses"][status])
        same(allot, a.get("content", {}), runai, b.get("content", {}),
             "%s %s content" % (where, status), out, seen)
    if ("requestBody" in mine) != ("requestBody" in theirs):
        out.append("%s: request body %s" % (where, "only allot's" if "requestBody" in mine
                                            else "missing"))
    elif "requestBody" in mine:
        same(allot, mine["requestBody"], runai, theirs["requestBody"], where + " body", out,
             seen)


def main(argv):
    root = argv[0] if argv else os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    allot = Doc(os.path.join(root, "openapi", "openapi.json"))
    runai = Doc(os.environ.get("ALLOT_RUNAI_OPENAPI") or os.path.join(
        os.path.dirname(os.path.abspath(root)), "shared", "reference", "runai-openapi.json"))
    index = {(norm(p), m): p for p, item in runai.d["paths"].items() for m in item
             if m in METHODS}
    problems, shared, extensions = [], 0, []
    for path, item in allot.d["paths"].items():
        for method in item:
            if method not in METHODS:
                continue
            tmpl = index.get((norm(path), method))
            if tmpl is None:
                extensions.append("%s %s" % (method.upper(), path))
                continue
            shared += 1
            check_operation(allot, runai, path, tmpl, method, problems, extensions)
    for p in problems:
        print("openapi subset: " + p, file=sys.stderr)
    print("openapi subset: %d operations shared with Run:ai's document; allot's extensions:"
          % shared)
    for e in extensions:
        print("  " + e)
    sync = subprocess.run([sys.executable, os.path.join(root, "scripts", "openapi-sync.py"),
                           "--check"], capture_output=True, text=True)
    sys.stderr.write(sync.stderr)
    return 1 if problems or sync.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
