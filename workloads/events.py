"""Writes a training job's events: one JSON object per line, as PROTOCOL.md describes.

Standard library only. The event names and their fields are read from
protocol.schema.json, so a line this writer accepts has exactly the schema's fields.
"""

import json
import math
import os
import sys
import time

PROTOCOL_VERSION = 2
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protocol.schema.json")
COMMON_FIELDS = ("mono", "wall", "job", "event")


def load_schema(path=SCHEMA_PATH):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def event_fields(schema=None):
    """{event name: tuple of its own fields (without mono, wall, job, event)} from the schema."""
    schema = schema or load_schema()
    fields = {}
    for branch in schema["oneOf"]:
        definition = schema["$defs"][branch["$ref"].rsplit("/", 1)[1]]
        props = definition["properties"]
        name = props["event"]["const"]
        fields[name] = tuple(k for k in props if k not in COMMON_FIELDS)
    return fields


class EventWriter:
    """Appends events to a file (or writes them to a stream such as stdout), one flushed
    line each. `emit` checks the fields against the schema; `close` fsyncs a file."""

    def __init__(self, stream, job, owns_stream=False):
        self.stream = stream
        self.job = int(job)
        self.owns_stream = owns_stream
        self.fields = event_fields()

    @classmethod
    def open(cls, path, job):
        """`path` is a file to append to, or `-` for standard output."""
        if path == "-":
            return cls(sys.stdout, job)
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        return cls(open(path, "a", encoding="utf-8"), job, owns_stream=True)

    def emit(self, event, **fields):
        """Writes one event and returns it as a dict. Raises ValueError for an unknown
        event, missing or extra fields, or a NaN/infinite number (not valid JSON)."""
        expected = self.fields.get(event)
        if expected is None:
            raise ValueError(f"unknown event {event!r}")
        if set(fields) != set(expected):
            missing = sorted(set(expected) - set(fields))
            extra = sorted(set(fields) - set(expected))
            raise ValueError(f"event {event!r}: missing fields {missing}, unexpected fields {extra}")
        for key, value in fields.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"event {event!r}: field {key!r} is {value}, which JSON cannot carry")
        record = {"mono": time.monotonic(), "wall": time.time(), "job": self.job, "event": event}
        record.update((k, fields[k]) for k in expected)
        self.stream.write(json.dumps(record, allow_nan=False) + "\n")
        self.stream.flush()
        return record

    def close(self):
        """Flushes, and for a file fsyncs and closes it."""
        try:
            self.stream.flush()
            if self.owns_stream:
                os.fsync(self.stream.fileno())
        finally:
            if self.owns_stream:
                self.stream.close()
