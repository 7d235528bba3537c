#!/usr/bin/env python3
"""Checks training-job event logs against protocol.schema.json and the protocol's order.

    python3 workloads/validate_events.py [--partial] [--schema FILE] LOG.jsonl...

Prints `LOG: N events ok` for each good log; for a bad one prints `LOG:LINE: message`
for each problem to stderr. Exit status: 0 all logs good, 1 a problem found, 2 usage.
`--partial` accepts a log that stops before its `end` line (a job that was killed).

Standard library only. The JSON Schema support covers what the schema uses: type,
required, properties, additionalProperties, items, const, enum, oneOf, anyOf, allOf,
minimum, maximum and local $ref. Logs of protocol versions 1 and 2 are accepted, each with
its own rules (the version is the one `hello` declares). Integers must be JSON integers (1.0 is not one, as for serde).
"""

import argparse
import json
import os
import sys

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protocol.schema.json")
EXIT_CODES = {"window_done": 0, "completed": 0, "aborted": 3, "oom": 4}
VERSIONS = (1, 2)
V2_EVENTS = ("iterations", "window_met")


# --- JSON Schema subset -------------------------------------------------------------

def _type_ok(value, name):
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    raise ValueError(f"schema uses unknown type {name!r}")


def _resolve(root, ref):
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, got {ref!r}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def schema_errors(value, schema, root=None, path="$"):
    """Returns a list of `path: message` strings; empty when `value` matches `schema`."""
    root = root if root is not None else schema
    if "$ref" in schema:
        return schema_errors(value, _resolve(root, schema["$ref"]), root, path)
    errors = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, t) for t in types):
            return [f"{path}: expected {' or '.join(types)}, got {json.dumps(value)}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {json.dumps(schema['const'])}, got {json.dumps(value)}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {json.dumps(value)} is not one of {json.dumps(schema['enum'])}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} is above the maximum {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing field {key!r}")
        for key, item in value.items():
            if key in props:
                errors += schema_errors(item, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{path}: unexpected field {key!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += schema_errors(item, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, f"{path}[{i}]")
    for sub in schema.get("allOf", []):
        errors += schema_errors(value, sub, root, path)
    for keyword in ("oneOf", "anyOf"):
        if keyword in schema:
            errors += _alternatives(value, schema[keyword], keyword, root, path)
    return errors


def _alternatives(value, branches, keyword, root, path):
    results = [schema_errors(value, b, root, path) for b in branches]
    matched = sum(1 for r in results if not r)
    if matched == 1 or (matched > 1 and keyword == "anyOf"):
        return []
    if matched > 1:
        return [f"{path}: matches {matched} alternatives of oneOf, expected exactly one"]
    # Report the alternative whose `const` discriminators the value satisfies, if any
    # (for events: the definition named by the `event` field).
    for branch, errors in zip(branches, results):
        if _discriminated(value, branch, root):
            return errors
    names = [_discriminator(b, root) for b in branches]
    if isinstance(value, dict) and all(names):
        key = names[0][0]
        return [f"{path}: {key} {json.dumps(value.get(key))} is not one of "
                f"{json.dumps([n[1] for n in names])}"]
    return [f"{path}: matches none of the {len(branches)} alternatives of {keyword}"]


def _discriminator(branch, root):
    """(property, const value) of the first const property of a branch, or None."""
    while "$ref" in branch:
        branch = _resolve(root, branch["$ref"])
    for key, prop in branch.get("properties", {}).items():
        if "const" in prop:
            return key, prop["const"]
    return None


def _discriminated(value, branch, root):
    found = _discriminator(branch, root)
    return found is not None and isinstance(value, dict) and value.get(found[0]) == found[1]


# --- protocol order -------------------------------------------------------------------

class _Order:
    """Feeds on the events of one log in order and collects protocol errors."""

    def __init__(self):
        self.seen = []   # event names so far
        self.errors = []  # (line, message)
        self.job = None
        self.mono = None
        self.error_kinds = set()
        self.version = None
        self.next_step = 0        # protocol 2: first_step the next iterations chunk must have
        self.next_base = None     # and its base_mono (the previous chunk's last end)

    def feed(self, line, ev):
        name = ev["event"]
        seen = self.seen

        def bad(message):
            self.errors.append((line, message))

        if not seen and name != "hello":
            bad(f"the first event must be hello, got {name}")
        if seen and seen[-1] == "end":
            bad(f"{name} after end: end must be the last event")
        if name in ("hello", "versions", "ready", "release", "window_start", "window_met", "window_end",
                    "end") and name in seen:
            bad(f"a second {name} event")
        if self.job is None:
            self.job = ev["job"]
        elif ev["job"] != self.job:
            bad(f"job is {ev['job']}, earlier lines say {self.job}")
        if self.mono is not None and ev["mono"] < self.mono:
            bad(f"mono goes backwards ({ev['mono']} after {self.mono})")
        self.mono = ev["mono"]

        if name == "versions" and "ready" in seen:
            bad("versions after ready")
        if name == "release" and "ready" not in seen:
            bad("release before ready")
        if name == "window_start" and "release" not in seen:
            bad("window_start before release")
        if name in ("sample", "epoch_end", "window_end") and "window_start" not in seen:
            bad(f"{name} before window_start")
        if name in ("sample", "epoch_end") and "window_end" in seen:
            bad(f"{name} after window_end")
        if name == "hello":
            self.version = ev["protocol_version"]
            if self.version not in VERSIONS:
                bad(f"protocol_version {self.version} is not one of {', '.join(map(str, VERSIONS))}")
        if name in V2_EVENTS:
            if self.version == 1:
                bad(f"{name} in a protocol version 1 log")
            if "window_start" not in seen:
                bad(f"{name} before window_start")
            if "window_end" in seen:
                bad(f"{name} after window_end")
        if name == "iterations":
            self._check_chunk(bad, ev)
        if name == "window_met":
            if ev["ci_rel"] is not None and ev["ci_rel"] < 0:
                bad(f"window_met: ci_rel {ev['ci_rel']} is negative")
            if ev["precision_met"] is True and ev["ci_rel"] is None:
                bad("window_met: precision_met true without a ci_rel")
        if name == "error":
            self.error_kinds.add(ev["kind"])
        if name == "end":
            self._check_end(bad, ev)
        seen.append(name)

    def _check_chunk(self, bad, ev):
        n = len(ev["end_us"])
        if n == 0:
            bad("iterations with no iteration")
        if len(ev["images"]) != n or len(ev["data_wait_us"]) != n:
            bad("iterations: end_us, images and data_wait_us differ in length")
        if any(b <= a for a, b in zip(ev["end_us"], ev["end_us"][1:])):
            bad("iterations: end_us decreases or repeats")
        if ev["first_step"] != self.next_step:
            bad(f"iterations: first_step {ev['first_step']}, expected {self.next_step}")
        if self.next_base is not None and abs(ev["base_mono"] - self.next_base) > 2e-6:
            bad(f"iterations: base_mono {ev['base_mono']} is not the previous chunk's last end {self.next_base}")
        self.next_step = ev["first_step"] + n
        self.next_base = ev["base_mono"] + (ev["end_us"][-1] * 1e-6 if n else 0.0)

    def _check_end(self, bad, ev):
        reason, code, seen = ev["reason"], ev["exit_code"], self.seen
        if reason in ("window_done", "completed") and "window_end" not in seen:
            bad(f"end reason {reason} without a window_end")
        if reason == "aborted" and "release" in seen:
            bad("end reason aborted after release")
        if reason == "oom" and "oom" not in self.error_kinds:
            bad("end reason oom without an error of kind oom")
        if reason == "error" and not self.error_kinds:
            bad("end reason error without an error event")
        expected = EXIT_CODES.get(reason)
        if expected is not None and code != expected:
            bad(f"end reason {reason} must have exit_code {expected}, got {code}")
        if reason == "error" and code == 0:
            bad("end reason error must have a non-zero exit_code")

    def finish(self, last_line, partial):
        if not self.seen:
            self.errors.append((last_line, "no events"))
        elif self.seen[-1] != "end" and not partial:
            self.errors.append((last_line, "the log does not finish with an end event"))


def validate_lines(lines, schema, partial=False):
    """Returns ([(line number, message)], number of events) for the lines of one log."""
    order = _Order()
    errors, count, number = [], 0, 0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            ev = json.loads(text)
        except json.JSONDecodeError as e:
            errors.append((number, f"not JSON: {e}"))
            continue
        problems = schema_errors(ev, schema)
        if problems:
            errors += [(number, p) for p in problems]
            continue
        count += 1
        order.feed(number, ev)
    order.finish(max(number, 1), partial)
    return sorted(errors + order.errors, key=lambda e: e[0]), count


def validate_file(path, schema, partial=False):
    with open(path, encoding="utf-8") as f:
        return validate_lines(f.read().splitlines(), schema, partial)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Check training-job event logs (see PROTOCOL.md).")
    parser.add_argument("logs", nargs="+", metavar="LOG.jsonl")
    parser.add_argument("--schema", default=SCHEMA_PATH, help="JSON Schema (default: %(default)s)")
    parser.add_argument("--partial", action="store_true",
                        help="accept a log that stops before its end event")
    args = parser.parse_args(argv)
    try:
        with open(args.schema, encoding="utf-8") as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{args.schema}: cannot read the schema: {e}", file=sys.stderr)
        return 2
    status = 0
    for path in args.logs:
        try:
            errors, count = validate_file(path, schema, args.partial)
        except (OSError, UnicodeDecodeError) as e:
            errors, count = [(0, f"cannot read: {e}")], 0
        for line, message in errors:
            print(f"{path}:{line}: {message}", file=sys.stderr)
        if errors:
            status = 1
        else:
            print(f"{path}: {count} events ok")
    return status


if __name__ == "__main__":
    sys.exit(main())
