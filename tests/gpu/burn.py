#!/usr/bin/env python3
"""burn.py: tests/gpu/run.sh's GPU workload where nvcc is missing, with
PyTorch or CuPy, the same as burn.cu: `burn.py busy|hold SECONDS MIB`
allocates MIB MiB on the first visible device and keeps it busy with
matrix products (busy) or only holds the memory (hold) for SECONDS;
prints "term" and exits 0 on SIGTERM, "done" at the end, exits 2 on
error."""
import os
import signal
import sys
import time

stop = False


def on_term(signum, frame):
    global stop
    stop = True


def backend():
    try:
        import torch
        if torch.cuda.is_available():
            return "torch", torch
    except ImportError:
        pass
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return "cupy", cupy
    except Exception:
        pass
    return None, None


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("busy", "hold"):
        print("usage: burn.py busy|hold SECONDS MIB", file=sys.stderr)
        return 2
    busy, seconds, mib = sys.argv[1] == "busy", float(sys.argv[2]), int(sys.argv[3])
    signal.signal(signal.SIGTERM, on_term)
    name, lib = backend()
    if not lib:
        print("burn.py: neither PyTorch with CUDA nor CuPy", file=sys.stderr)
        return 2
    n = mib * 1024 * 1024 // 4
    if name == "torch":
        held = lib.zeros(n, dtype=lib.float32, device="cuda")
        a = lib.rand(4096, 4096, device="cuda")
        sync = lib.cuda.synchronize
    else:
        held = lib.zeros(n, dtype=lib.float32)
        a = lib.random.rand(4096, 4096, dtype=lib.float32)
        sync = lib.cuda.Device().synchronize
    print("allocated %d MiB with %s (CUDA_VISIBLE_DEVICES=%s), %s for %.0f s"
          % (mib, name, os.environ.get("CUDA_VISIBLE_DEVICES", ""),
             "busy" if busy else "holding it", seconds), flush=True)
    start = time.monotonic()
    while not stop and time.monotonic() - start < seconds:
        if busy:
            b = a @ a
            sync()
            del b
        else:
            time.sleep(0.1)
    print("term" if stop else "done", flush=True)
    del held
    return 0


if __name__ == "__main__":
    sys.exit(main())
