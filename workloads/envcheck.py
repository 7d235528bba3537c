#!/usr/bin/env python3
"""The GPU host's Python environment against the lock the shipped campaign ran with.

    python3 envcheck.py [--lock environment.lock]     # JSON: what is here, what differs
    python3 envcheck.py --print                        # this host's versions, as a lock

The lock holds one `name==version` per line (`#` starts a comment); `python` is the
interpreter's version, every other name a distribution read with importlib.metadata, so
nothing is imported and the check takes a fraction of a second. Standard library only.
Exit status: 0 when the host matches the lock, 1 when something differs or is missing,
2 when the lock cannot be read.
"""
import argparse
import importlib.metadata
import json
import os
import platform
import sys

DEFAULT_LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "environment.lock")
PACKAGES = ["torch", "torchvision", "timm", "numpy", "pillow"]


class LockError(Exception):
    pass


def read_lock(path):
    """`{name: version}` in file order; a malformed line is an error naming it."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise LockError(f"{path}: cannot read: {e.strerror}") from e
    out = {}
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        name, version = name.strip().lower(), version.strip()
        if not sep or not name or not version or " " in name or " " in version:
            raise LockError(f"{path}:{n}: expected `name==version`, found {raw.strip()!r}")
        if name in out:
            raise LockError(f"{path}:{n}: {name} is locked twice")
        out[name] = version
    if not out:
        raise LockError(f"{path}: the lock names no package")
    return out


def installed(name):
    """This host's version of `name`, or None when it is not installed."""
    if name == "python":
        return platform.python_version()
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check(lock):
    here = {name: installed(name) for name in lock}
    differs = []
    for name, want in lock.items():
        got = here[name]
        if got is None:
            differs.append(f"{name}: not installed here, {want} locked")
        elif got != want:
            differs.append(f"{name}: {got} here, {want} locked")
    return here, differs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lock", default=DEFAULT_LOCK, help="the lock file (default: environment.lock beside this script)")
    ap.add_argument("--print", action="store_true", help="print this host's versions in the lock's format")
    a = ap.parse_args(argv)
    if a.print:
        for name in ["python"] + PACKAGES:
            print(f"{name}=={installed(name) or 'not-installed'}")
        return 0
    try:
        lock = read_lock(a.lock)
    except LockError as e:
        print(json.dumps({"lock": a.lock, "error": str(e)}))
        return 2
    here, differs = check(lock)
    print(json.dumps({"lock": a.lock, "here": here, "locked": lock, "differs": differs}, sort_keys=True))
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
