#!/usr/bin/env python3
"""layout.py: the folders' include rules (docs/architecture.md, "Folders").

Every #include of every .c and .h file under the project's source folders
is checked against the table below: a project header must belong to the
file's own folder or to a folder it may import (and, where the table names
them, to those headers alone); a system header must not be one the folder
is kept from. Run as `layout.py ROOT`; prints each breach and exits 1, or
prints the count of includes checked and exits 0. `layout.py --self-test`
checks a made-up tree of known breaches and that each is found.
"""
import os
import re
import sys

# folder: (folders it may import, {folder: only these headers}, system
# headers it must not include). Headers the build writes (allot_version.h)
# are in GENERATED.
RULES = {
    # The core is pure: the C library's arithmetic and strings, nothing else.
    "scheduler": ([], {}, {"*"}),
    "common": ([], {}, {"jansson.h", "sqlite3.h", "libpq-fe.h", "civetweb.h", "curl/curl.h"}),
    "db": (["common"], {}, {"civetweb.h", "curl/curl.h"}),
    # The control loop drives the core and the store; never the HTTP side.
    "control": (["scheduler", "db", "common"], {"scheduler": {"sched.h"}},
                {"civetweb.h", "curl/curl.h", "jwt.h"}),
    # The HTTP side reaches the loop through control.h alone, and the core
    # only for its vocabulary (sched.h: priority classes, placement words).
    "api": (["control", "scheduler", "db", "common"],
            {"control": {"control.h"}, "scheduler": {"sched.h"}}, {"curl/curl.h"}),
    "sim": (["scheduler", "common"], {}, {"civetweb.h", "sqlite3.h", "libpq-fe.h", "curl/curl.h"}),
    "cli": (["sim", "scheduler", "common"], {}, {"civetweb.h", "sqlite3.h", "libpq-fe.h"}),
    "agent": (["common"], {}, {"civetweb.h", "sqlite3.h", "libpq-fe.h"}),
    "bench": (["scheduler", "sim", "common"], {}, {"civetweb.h"}),
}
# The system headers the core may include.
CORE_SYSTEM = {"assert.h", "inttypes.h", "limits.h", "math.h", "stdbool.h", "stddef.h",
               "stdint.h", "stdio.h", "stdlib.h", "string.h"}
GENERATED = {"allot_version.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources(root, folder):
    for base, _, files in os.walk(os.path.join(root, folder)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(base, f)


def check(root):
    owner = {}
    for folder in RULES:
        for path in sources(root, folder):
            if path.endswith(".h"):
                owner.setdefault(os.path.basename(path), folder)
    breaches, checked = [], 0
    for folder, (may, only, kept_from) in RULES.items():
        for path in sources(root, folder):
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for quote, name in INCLUDE.findall(text):
                checked += 1
                base = os.path.basename(name)
                if quote == "<":
                    if "*" in kept_from and name not in CORE_SYSTEM:
                        breaches.append(f"{rel}: <{name}>: {folder}/ includes the C library only")
                    elif name in kept_from:
                        breaches.append(f"{rel}: <{name}>: {folder}/ must not include it")
                    continue
                if base in GENERATED and folder not in ("scheduler", "common", "db", "control"):
                    continue
                home = owner.get(base)
                if home is None:
                    breaches.append(f'{rel}: "{name}": no folder of the project has it')
                elif home != folder and home not in may:
                    breaches.append(f'{rel}: "{name}" is {home}/\'s: {folder}/ may import '
                                    f"{', '.join(may) or 'nothing'}")
                elif home in only and base not in only[home]:
                    breaches.append(f'{rel}: "{name}": {folder}/ reaches {home}/ only through '
                                    f"{', '.join(sorted(only[home]))}")
    return breaches, checked


# A made-up tree: each file breaks one rule (the breach's text must name
# its file), and a clean file that must pass.
SELF_TEST = {
    "control/loop.c": '#include "api.h"\n',
    "scheduler/core.c": "#include <pthread.h>\n",
    "api/route.c": '#include "model.h"\n#include "control.h"\n',
    "sim/world.c": '#include "cmd.h"\n',
    "db/store.c": '#include "clock.h"\n#include <sqlite3.h>\n',
    "api/api.h": "", "control/control.h": "", "control/model.h": "",
    "cli/cmd.h": "", "common/clock.h": "",
}
SELF_TEST_BREACHES = {"control/loop.c", "scheduler/core.c", "api/route.c", "sim/world.c"}


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        for rel, text in SELF_TEST.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        breaches, _ = check(root)
    found = {b.split(":")[0] for b in breaches}
    if found != SELF_TEST_BREACHES or len(breaches) != len(SELF_TEST_BREACHES):
        print("self-test: expected breaches in", sorted(SELF_TEST_BREACHES), "got", breaches)
        return 1
    print(f"layout self-test: {len(breaches)} planted breaches found, the clean file passed")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    breaches, checked = check(sys.argv[1] if len(sys.argv) > 1 else ".")
    for b in breaches:
        print(b)
    if breaches:
        print(f"{len(breaches)} include(s) break the layout")
        return 1
    print(f"layout: {checked} includes checked, none breaks the layout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
