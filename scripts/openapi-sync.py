#!/usr/bin/env python3
"""openapi-sync.py: keeps what allot says about Run:ai's API in step with
Run:ai's published OpenAPI document (../shared/reference/runai-openapi.json
beside the checkout, or ALLOT_RUNAI_OPENAPI: NVIDIA's document, under
NVIDIA's licence, is not part of allot).

    scripts/openapi-sync.py           rewrite the three files below
    scripts/openapi-sync.py --check   exit 1 if any of them is stale

It writes:
  1. openapi/openapi.json: every operation allot shares with Run:ai's
     document (same path template, same method) takes Run:ai's definition:
     its path template, operationId, the parameters allot lists (by name,
     with Run:ai's definition of each; a parameter marked
     "x-allot-extension": true is allot's own and kept as it is), Run:ai's
     request body, and, for each
     status allot lists, Run:ai's response; the schemas these name are
     copied into components.schemas under Run:ai's names. What allot keeps
     of its own: summary, security, x-allot-permission, and the statuses
     any operation may answer whatever Run:ai's lists (401 without a valid
     token, 413 and 429 from the HTTP layer, 500 and 507 when storage
     fails, 501 for a part allotd does not implement), which
     point at allot's Error response.
     Operations only allot has (agent routes, /healthz, PATCH of a
     project, ...) are left as they are, and so is a response of a shared
     operation marked "x-allot-extension": "<an extension parameter>" (the
     reply when the request uses that parameter, e.g. dryRun=true's 200);
     the schemas allot's extensions name are allot's own.
  2. api/runai_ops.c: every operation of Run:ai's document (method, path,
     operationId), so allotd answers 501 naming the ones it does not serve.
  3. docs/allotd.md, between its "runai-operations" markers: the document's
     operations allot implements and the ones it does not, by tag.

tests/server/openapi_subset.py checks (1) field by field and runs --check.
"""
import copy
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNAI = os.environ.get("ALLOT_RUNAI_OPENAPI") or os.path.join(
    os.path.dirname(ROOT), "shared", "reference", "runai-openapi.json")
ALLOT = os.path.join(ROOT, "openapi", "openapi.json")
OPS_C = os.path.join(ROOT, "api", "runai_ops.c")
DOCS = os.path.join(ROOT, "docs", "allotd.md")
METHODS = ("get", "put", "post", "delete", "patch")
TRANSPORT = ("401", "413", "429", "500", "501", "507")
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))
from openapi_ref import deref  # noqa: E402  (the tests' own, shared)

BEGIN = "<!-- runai-operations:begin (scripts/openapi-sync.py writes this part) -->"
END = "<!-- runai-operations:end -->"


def norm(path):
    return re.sub(r"\{[^}]*\}", "{}", path)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def schema_refs(obj, out):
    """Adds the component schema names obj refers to, directly."""
    if isinstance(obj, dict):
        ref = obj.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            out.add(ref.rsplit("/", 1)[1])
        for v in obj.values():
            schema_refs(v, out)
    elif isinstance(obj, list):
        for v in obj:
            schema_refs(v, out)


def closure(doc, names):
    todo, seen = list(names), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        more = set()
        schema_refs(doc["components"]["schemas"][n], more)
        todo.extend(more - seen)
    return seen


def shared_index(runai):
    return {(norm(p), m): p for p, item in runai["paths"].items() for m in item if m in METHODS}


def is_extension(obj):
    """A parameter or response of a shared operation that only allot has."""
    return isinstance(obj, dict) and bool(obj.get("x-allot-extension"))


def extension_parts(op):
    """The parameters and responses of op that are allot's extensions."""
    return ([p for p in op.get("parameters", []) if is_extension(p)] +
            [r for r in op.get("responses", {}).values() if is_extension(r)])


def sync_operation(runai, tmpl, method, mine, problems):
    """Allot's operation `mine` redone from Run:ai's (tmpl, method)."""
    theirs = runai["paths"][tmpl][method]
    params = {}
    for p in runai["paths"][tmpl].get("parameters", []) + theirs.get("parameters", []):
        p = deref(runai, p)
        params[(p["name"], p["in"])] = p
    op = {"summary": mine.get("summary", theirs.get("summary", "")),
          "operationId": theirs.get("operationId", mine.get("operationId"))}
    wanted = [(p["name"], p["in"]) for p in mine.get("parameters", []) if p.get("in") != "path"]
    own = {(p["name"], p["in"]): p for p in mine.get("parameters", [])
           if p.get("x-allot-extension")}
    out_params = [copy.deepcopy(p) for k, p in params.items() if k[1] == "path"]
    for key in wanted:
        if key in own and key not in params:
            out_params.append(copy.deepcopy(own[key]))  # allot's extension, kept as it is
            continue
        if key not in params:
            problems.append("%s %s: Run:ai's operation has no %s parameter %s"
                            % (method.upper(), tmpl, key[1], key[0]))
            continue
        out_params.append(copy.deepcopy(params[key]))
    if out_params:
        op["parameters"] = out_params
    if "requestBody" in theirs and "requestBody" in mine:
        op["requestBody"] = copy.deepcopy(deref(runai, theirs["requestBody"]))
    responses = {}
    for status, reply in mine.get("responses", {}).items():
        if is_extension(reply):
            responses[status] = copy.deepcopy(reply)
        elif status in theirs["responses"]:
            responses[status] = copy.deepcopy(deref(runai, theirs["responses"][status]))
        elif status in TRANSPORT:
            responses[status] = {"$ref": "#/components/responses/Error"}
        else:
            problems.append("%s %s: status %s is not in Run:ai's operation (it lists %s)"
                            % (method.upper(), tmpl, status, ", ".join(sorted(theirs["responses"]))))
    op["responses"] = responses
    for key in ("security", "x-allot-permission", "x-allot-refused"):
        if key in mine:
            op[key] = mine[key]
    return op


def sync_spec(runai, allot, problems):
    index = shared_index(runai)
    paths = {}
    for path, item in allot["paths"].items():
        for method, mine in item.items():
            if method not in METHODS:
                continue
            tmpl = index.get((norm(path), method))
            if tmpl is None:
                paths.setdefault(path, {})[method] = mine
            else:
                paths.setdefault(tmpl, {})[method] = sync_operation(runai, tmpl, method, mine,
                                                                    problems)
    out = dict(allot)
    out["paths"] = dict(sorted(paths.items()))
    # component schemas: Run:ai's closure for the shared operations, allot's
    # own for the rest (a name in both must be Run:ai's schema)
    used_shared, used_own = set(), set()
    for path, item in paths.items():
        for method, op in item.items():
            if (norm(path), method) not in index:
                schema_refs(op, used_own)
                continue
            ext = extension_parts(op)
            schema_refs(ext, used_own)
            schema_refs({k: v for k, v in op.items() if k not in ("parameters", "responses")},
                        used_shared)
            schema_refs([p for p in op.get("parameters", []) if not is_extension(p)],
                        used_shared)
            schema_refs([r for r in op.get("responses", {}).values() if not is_extension(r)],
                        used_shared)
    schema_refs(allot["components"].get("responses", {}), used_own)
    own = allot["components"].get("schemas", {})
    schemas = {n: copy.deepcopy(runai["components"]["schemas"][n])
               for n in closure(runai, used_shared)}
    for n in closure(allot, used_own):
        if n in schemas and own[n] != schemas[n]:
            problems.append("components.schemas.%s differs from Run:ai's schema of that name"
                            % n)
        schemas.setdefault(n, own[n])
    out["components"] = dict(allot["components"])
    out["components"]["schemas"] = dict(sorted(schemas.items()))
    return out


def ops_c(runai, served):
    rows = []
    for path, item in runai["paths"].items():
        for method in METHODS:
            if method in item:
                rows.append('    {"%s", "%s", "%s", %d},' % (
                    method.upper(), path, item[method].get("operationId", ""),
                    (norm(path), method) in served))
    return ("/*\n"
            " * runai_ops.c: every operation of Run:ai's OpenAPI document\n"
            " * (../shared/reference/runai-openapi.json): method, path template,\n"
            " * operationId, and whether allotd serves it. The dispatcher (http.c)\n"
            " * answers 501 naming the operation when a request is for one allotd\n"
            " * does not serve.\n"
            " *\n"
            " * Written by scripts/openapi-sync.py; tests/server/openapi_subset.py\n"
            " * fails when it is stale. Do not edit by hand.\n"
            " */\n"
            "#include \"api.h\"\n\n"
            "const struct api_runai_op api_runai_ops[] = {\n" + "\n".join(rows) + "\n};\n"
            "const int api_n_runai_ops = (int)(sizeof(api_runai_ops) / sizeof(api_runai_ops[0]));\n")


def docs_part(runai, served, refused):
    by_tag = {}
    for path, item in runai["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            tag = (item[method].get("tags") or ["Other"])[0]
            key = (norm(path), method)
            by_tag.setdefault(tag, [[], []])[0 if key in served else 1].append(
                "`%s %s`%s" % (method.upper(), path, " (refused)" if key in refused else ""))
    n_all = sum(len(a) + len(b) for a, b in by_tag.values())
    n_served = sum(len(a) for a, b in by_tag.values())
    lines = [BEGIN, "",
             "allotd serves %d of the %d operations of Run:ai's document; %d more, marked "
             "(refused), are kinds of assets allot cannot run: creating one answers `400` "
             "saying why, and no such asset exists (`404`); every other one "
             "answers `501` with a body naming it (`code`, `message`, and the operation in "
             "`details`)." % (n_served, n_all, len(refused)), "",
             "| tag | implemented | not implemented (501) or refused |", "|---|---|---|"]
    for tag in sorted(by_tag):
        done, todo = by_tag[tag]
        lines.append("| %s | %s | %s |" % (tag, "<br>".join(done) or "-",
                                          ("<br>".join(todo) or "-") if done else
                                          "all %d" % len(todo) if todo else "-"))
    lines += ["", END]
    return "\n".join(lines)


def served_ops(runai, spec, refused=False):
    """The shared operations allot serves; with refused, instead those it
    routes only to refuse ("x-allot-refused": why: a kind of asset allot
    cannot run), which count as not served."""
    index = shared_index(runai)
    return {(norm(p), m) for p, item in spec["paths"].items() for m in item
            if m in METHODS and (norm(p), m) in index
            and bool(item[m].get("x-allot-refused")) == refused}


def main(argv):
    check = "--check" in argv
    runai, allot = load(RUNAI), load(ALLOT)
    problems = []
    spec = sync_spec(runai, allot, problems)
    served = served_ops(runai, spec)
    refused = served_ops(runai, spec, refused=True)
    with open(DOCS, encoding="utf-8") as f:
        docs = f.read()
    if BEGIN not in docs or END not in docs:
        problems.append("docs/allotd.md lacks the runai-operations markers")
        new_docs = docs
    else:
        new_docs = docs[:docs.index(BEGIN)] + docs_part(runai, served, refused) + \
            docs[docs.index(END) + len(END):]
    outputs = {ALLOT: json.dumps(spec, indent=2, ensure_ascii=False) + "\n",
               OPS_C: ops_c(runai, served), DOCS: new_docs}
    for p in problems:
        print("openapi-sync: " + p, file=sys.stderr)
    stale = []
    for path, text in outputs.items():
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not check and not problems:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if check and stale:
        print("openapi-sync: stale (run scripts/openapi-sync.py): " + ", ".join(stale),
              file=sys.stderr)
    print("openapi-sync: %d of Run:ai's %d operations served" %
          (len(served), len(shared_index(runai))))
    return 1 if problems or (check and stale) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
