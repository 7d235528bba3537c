#!/usr/bin/env python3
"""A short CPU calibration, so that benchmark records made on different hosts can be told
apart: fixed work on one core, timed (best of `--repeat`), a few seconds in all.

    python3 benchmarks/calibrate.py [--repeat 3] [--json FILE]

Parts: `python` a pure-Python integer loop; `sha256` hashing 64 MiB; `numpy_sort` sorting
4 Mi float64; `numpy_fft` a 2^20-point complex FFT, four times (numpy's sort and FFT run
on one thread). Also prints the CPU model, the core count and the load average. numpy is
optional (its parts are skipped without it). Times in seconds: lower is faster.
"""

import argparse
import hashlib
import json
import os
import platform
import sys
import time


def python_loop():
    acc = 0
    for i in range(3_000_000):
        acc = (acc + i * 2654435761) % 1_000_003
    return acc


def sha256_64mib():
    block = bytes(range(256)) * 4096  # 1 MiB
    h = hashlib.sha256()
    for _ in range(64):
        h.update(block)
    return h.hexdigest()


def parts():
    out = {"python": python_loop, "sha256": sha256_64mib}
    try:
        import numpy as np
    except ImportError:
        return out
    values = np.random.default_rng(0).standard_normal(4 << 20)
    signal = np.random.default_rng(1).standard_normal(1 << 20) + 0j
    out["numpy_sort"] = lambda: np.sort(values)
    out["numpy_fft"] = lambda: [np.fft.fft(signal) for _ in range(4)]
    return out


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", help="also write the result here")
    args = p.parse_args(argv)
    result = {"cpu_model": cpu_model(), "cpu_cores": os.cpu_count(), "python": platform.python_version(),
              "load_average": list(os.getloadavg()), "seconds": {}}
    for name, work in parts().items():
        best = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            work()
            t = time.perf_counter() - t0
            best = t if best is None else min(best, t)
        result["seconds"][name] = round(best, 4)
    print(json.dumps(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
