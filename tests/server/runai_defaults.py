#!/usr/bin/env python3
"""runai_defaults.py: a workload submission with every default of Run:ai's document filled in.

Usage: runai_defaults.py DOC PATH BODY. PATH is a create operation's path
(/api/v1/workloads/trainings ...), BODY a JSON body to start from. Every
property of the operation's request schema that has a `default` (its own
or its referenced schema's) and is not under an array is set to that
default where BODY does not set it, creating the objects on the way, as a
client generated from the document sends them. Prints the body.
"""
import json
import sys


def defaults(schemas, node, path, out, seen):
    """(path, default) of every defaulted property under node, arrays left out."""
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        if name in seen:
            return
        target = schemas[name]
        if path and "default" in target:
            out.append((path, target["default"]))
        defaults(schemas, target, path, out, seen | {name})
        return
    if path and "default" in node:
        out.append((path, node["default"]))
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in node.get(key, []):
            defaults(schemas, sub, path, out, seen)
    for prop, sub in node.get("properties", {}).items():
        defaults(schemas, sub, path + [prop], out, seen)


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        doc = json.load(fh)
    body = json.loads(sys.argv[3])
    schemas = doc["components"]["schemas"]
    request = doc["paths"][sys.argv[2]]["post"]["requestBody"]["content"]["application/json"]
    found = []
    defaults(schemas, request["schema"], [], found, frozenset())
    for path, value in found:
        node = body
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node.setdefault(path[-1], value)
    print(json.dumps(body, sort_keys=True))


if __name__ == "__main__":
    main()
