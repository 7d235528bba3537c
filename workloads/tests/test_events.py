import io
import json
import os
import unittest

import events
import validate_events
from workloads.tests.util import tempdir

# One plausible value set per event type, as train.py writes them.
EXAMPLES = [
    ("hello", {"pid": 4242, "protocol_version": events.PROTOCOL_VERSION, "simulated": False}),
    ("versions", {"python": "3.12.3", "torch": "2.11.0+cu130", "timm": "1.0.29", "cuda": "13.0",
                  "cudnn": "91300", "device": "NVIDIA H200"}),
    ("ready", {"setup_seconds": 8.5, "warmup_seconds": 1.25, "warmup_steps": 10}),
    ("release", {}),
    ("window_start", {"step": 0}),
    ("sample", {"step": 50, "images": 6400, "seconds": 2.0, "data_wait_seconds": 0.5,
                "slow_data_steps": 3, "loss": 6.9}),
    ("iterations", {"first_step": 0, "base_mono": 812.403117, "end_us": [31020, 62011], "images": [128, 128],
                    "data_wait_us": [0, 12]}),
    ("window_met", {"step": 1290, "seconds": 12.5, "ci_rel": 0.0093, "precision_met": True}),
    ("epoch_end", {"epoch": 0, "images": 49920, "train_seconds": 15.5, "val_seconds": None,
                   "val_top1": None, "val_loss": None}),
    ("epoch_end", {"epoch": 1, "images": 49920, "train_seconds": 15.5, "val_seconds": 1.5,
                   "val_top1": 12.5, "val_loss": 4.5}),
    ("window_end", {"step": 100, "images": 12800, "seconds": 4.0}),
    ("memory", {"allocated_bytes": 1 << 30, "reserved_bytes": 2 << 30, "peak_allocated_bytes": 3 << 30,
                "peak_reserved_bytes": 4 << 30}),
    ("end", {"reason": "window_done", "exit_code": 0}),
]


class EventWriterTest(unittest.TestCase):
    def setUp(self):
        self.schema = events.load_schema()

    def test_every_event_type_is_covered(self):
        self.assertEqual({name for name, _ in EXAMPLES} | {"error"}, set(events.event_fields()))

    def test_lines_validate_against_the_schema(self):
        stream = io.StringIO()
        writer = events.EventWriter(stream, job=3)
        for name, fields in EXAMPLES + [("error", {"kind": "oom", "message": "CUDA out of memory"})]:
            record = writer.emit(name, **fields)
            self.assertEqual(list(record)[:4], ["mono", "wall", "job", "event"])
        lines = stream.getvalue().splitlines()
        self.assertEqual(len(lines), len(EXAMPLES) + 1)
        for line in lines:
            ev = json.loads(line)
            self.assertEqual(ev["job"], 3)
            self.assertEqual(validate_events.schema_errors(ev, self.schema), [], line)

    def test_a_whole_log_passes_the_validator(self):
        path = os.path.join(tempdir(self), "logs", "job-0.events.jsonl")
        writer = events.EventWriter.open(path, job=0)
        for name, fields in EXAMPLES:
            writer.emit(name, **fields)
        writer.close()
        self.assertTrue(writer.stream.closed)
        errors, count = validate_events.validate_file(path, self.schema)
        self.assertEqual(errors, [])
        self.assertEqual(count, len(EXAMPLES))

    def test_appends(self):
        path = os.path.join(tempdir(self), "job-0.events.jsonl")
        for _ in range(2):
            writer = events.EventWriter.open(path, job=0)
            writer.emit("release")
            writer.close()
        with open(path) as f:
            self.assertEqual(len(f.read().splitlines()), 2)

    def test_rejects_what_the_schema_does_not_allow(self):
        writer = events.EventWriter(io.StringIO(), job=0)
        with self.assertRaisesRegex(ValueError, "unknown event 'start'"):
            writer.emit("start")
        with self.assertRaisesRegex(ValueError, r"missing fields \['step'\]"):
            writer.emit("window_start")
        with self.assertRaisesRegex(ValueError, r"unexpected fields \['extra'\]"):
            writer.emit("window_start", step=0, extra=1)
        with self.assertRaisesRegex(ValueError, "'loss' is nan"):
            writer.emit("sample", step=1, images=1, seconds=1.0, data_wait_seconds=0.0,
                        slow_data_steps=0, loss=float("nan"))
        self.assertEqual(writer.stream.getvalue(), "")


if __name__ == "__main__":
    unittest.main()
