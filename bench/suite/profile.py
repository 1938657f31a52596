#!/usr/bin/env python3
"""profile.py: the test suite's own profile: every ctest test of a build
folder run JOBS at once, as `scripts/test.sh` runs them, with each test's
wall time and the CPU time of its process tree.

    bench/suite/profile.py BUILD_DIR [JOBS] [REGEX] > profile.txt

JOBS defaults to three times the cores (scripts/test.sh's default); REGEX, when
given, keeps the tests whose names it matches.

Step 1: `ctest --show-only=json-v1` lists the tests: each one's command,
        environment (ENVIRONMENT, with ALLOT_TEST_SCALE and the rest that
        cmake/testing.cmake adds) and folder, in ctest's order (COST, from
        tests/costs.txt, first).
Step 2: JOBS threads take the tests in that order, each run as ctest would
        run it; os.wait4() gives the CPU time of the test's process and of
        every child it waited for (the script, curl, jq, allotd, Chromium;
        not a server that outlives it, nor PostgreSQL's own processes).
Step 3: one line per test as it ends (stderr), then the table, costliest
        CPU first, and the totals: the run's wall time, the sum of the
        tests' CPU, and what is left of the cores (wall x cores - CPU).

ctest's TIMEOUT is not applied: a test that hangs hangs the profile.
"""
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time


def tests_of(build, pattern):
    """Step 1."""
    listing = json.loads(subprocess.check_output(
        ["ctest", "--test-dir", build, "--show-only=json-v1"]))
    tests = []
    for test in listing["tests"]:
        if pattern and not re.search(pattern, test["name"]):
            continue
        env, folder = dict(os.environ), build
        for prop in test.get("properties", []):
            if prop["name"] == "ENVIRONMENT":
                env.update(kv.split("=", 1) for kv in prop["value"])
            elif prop["name"] == "WORKING_DIRECTORY":
                folder = prop["value"]
        tests.append((test["name"], test["command"], env, folder))
    return tests


def run_all(tests, jobs):
    """Step 2: (name, wall s, user s, sys s, exit status) per test."""
    todo = queue.Queue()
    for test in tests:
        todo.put(test)
    results, lock = [], threading.Lock()

    def worker():
        while True:
            try:
                name, command, env, folder = todo.get_nowait()
            except queue.Empty:
                return
            start = time.monotonic()
            proc = subprocess.Popen(command, env=env, cwd=folder,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            row = (name, time.monotonic() - start, usage.ru_utime, usage.ru_stime,
                   os.waitstatus_to_exitcode(status))
            with lock:
                results.append(row)
                print("%s %.1f s, CPU %.1f s, exit %d" % (name, row[1], row[2] + row[3], row[4]),
                      file=sys.stderr, flush=True)

    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 3 * os.cpu_count()
    pattern = sys.argv[3] if len(sys.argv) > 3 else None
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[0]
    start = time.monotonic()
    results = run_all(tests_of(build, pattern), jobs)
    wall = time.monotonic() - start
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[0]
    cpu = sum(r[2] + r[3] for r in results)
    failed = [r[0] for r in results if r[4] not in (0, 77)]  # 77: a test that skips
    print("| test | wall s | CPU s (user + sys) | exit |")
    print("|---|---|---|---|")
    for name, w, user, system, code in sorted(results, key=lambda r: -(r[2] + r[3])):
        print("| %s | %.1f | %.1f (%.1f + %.1f) | %d |" % (name, w, user + system, user, system, code))
    print()
    print("%d tests, %d at once on %d cores: %.1f s of wall, %.1f s of CPU in the tests "
          "(%.0f%% of the cores); load average %s before, %s after%s" %
          (len(results), jobs, os.cpu_count(), wall, cpu, 100 * cpu / (wall * os.cpu_count()),
           load_before, load_after, "; FAILED: " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
