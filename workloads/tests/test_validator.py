import json
import os
import subprocess
import sys
import unittest

import events
import validate_events
from workloads.tests.util import WORKLOADS, tempdir

SCHEMA = events.load_schema()


def ev(event, mono, job=0, **fields):
    return {"mono": mono, "wall": 1.7e9 + mono, "job": job, "event": event, **fields}


def sample(mono, step):
    return ev("sample", mono, step=step, images=step * 8, seconds=1.0, data_wait_seconds=0.1,
              slow_data_steps=0, loss=2.5)


def good_log():
    return [
        ev("hello", 1, pid=10, protocol_version=1, simulated=True),
        ev("versions", 2, python="3.12.3", torch=None, timm=None, cuda=None, cudnn=None, device=None),
        ev("ready", 3, setup_seconds=1.0, warmup_seconds=0.5, warmup_steps=10),
        ev("release", 4),
        ev("window_start", 4, step=0),
        sample(5, 50),
        sample(6, 100),
        ev("window_end", 6, step=100, images=800, seconds=2.0),
        ev("memory", 6, allocated_bytes=1, reserved_bytes=2, peak_allocated_bytes=3, peak_reserved_bytes=4),
        ev("end", 7, reason="window_done", exit_code=0),
    ]


def good_v2_log():
    """A protocol-2 quick log: iterations chunks, window_met, the stop, window_end."""
    base = 4.001
    return [
        ev("hello", 1, pid=10, protocol_version=2, simulated=True),
        ev("versions", 2, python="3.12.3", torch=None, timm=None, cuda=None, cudnn=None, device=None),
        ev("ready", 3, setup_seconds=1.0, warmup_seconds=0.5, warmup_steps=10),
        ev("release", 4),
        ev("window_start", 4.001, step=0),
        ev("iterations", 5.1, first_step=0, base_mono=base, end_us=[400000, 800000], images=[8, 8],
           data_wait_us=[10, 0]),
        ev("window_met", 5.2, step=2, seconds=0.8, ci_rel=None, precision_met=None),
        ev("iterations", 5.3, first_step=2, base_mono=base + 0.8, end_us=[400000], images=[8], data_wait_us=[3]),
        ev("window_end", 5.3, step=3, images=24, seconds=1.2),
        ev("end", 5.4, reason="window_done", exit_code=0),
    ]


def lines(log):
    return [json.dumps(e) for e in log]


class ValidatorTest(unittest.TestCase):
    def check(self, log, partial=False):
        return [m for _, m in validate_events.validate_lines(lines(log), SCHEMA, partial)[0]]

    def assertRejects(self, log, expected, partial=False):
        messages = self.check(log, partial)
        self.assertTrue(any(expected in m for m in messages), f"{expected!r} not in {messages}")

    def test_good_logs(self):
        self.assertEqual(self.check(good_log()), [])
        aborted = good_log()[:3] + [ev("end", 4, reason="aborted", exit_code=3)]
        self.assertEqual(self.check(aborted), [])
        oom = good_log()[:6] + [ev("error", 6, kind="oom", message="CUDA out of memory"),
                                ev("end", 7, reason="oom", exit_code=4)]
        self.assertEqual(self.check(oom), [])
        early = good_log()[:1] + [ev("error", 2, kind="data", message="no images"),
                                  ev("end", 3, reason="error", exit_code=1)]
        self.assertEqual(self.check(early), [])

    def test_version_2(self):
        self.assertEqual(self.check(good_v2_log()), [])
        log = good_v2_log()
        log[7] = dict(log[7], first_step=3)
        self.assertRejects(log, "first_step 3, expected 2")
        log = good_v2_log()
        log[7] = dict(log[7], base_mono=4.9)
        self.assertRejects(log, "is not the previous chunk's last end")
        log = good_v2_log()
        log[5] = dict(log[5], images=[8])
        self.assertRejects(log, "differ in length")
        log = good_v2_log()
        log[5] = dict(log[5], end_us=[800000, 400000])
        self.assertRejects(log, "end_us decreases")
        log = good_v2_log()
        log[5] = dict(log[5], end_us=[-1, 400000])
        self.assertRejects(log, "$.end_us[0]: -1 is below the minimum 0")
        self.assertRejects(good_v2_log()[:6] + good_v2_log()[6:7] * 2 + good_v2_log()[7:], "a second window_met")
        v1 = good_v2_log()
        v1[0] = dict(v1[0], protocol_version=1)
        self.assertRejects(v1, "iterations in a protocol version 1 log")
        v3 = good_log()
        v3[0] = dict(v3[0], protocol_version=3)
        self.assertRejects(v3, "protocol_version 3 is not one of 1, 2")
        late = good_v2_log()
        late.insert(9, late[6])
        self.assertRejects(late, "window_met after window_end")

    def test_window_met_precision(self):
        for ci_rel, precision_met in ((0.008, True), (0.031, False), (None, False), (0.2, None)):
            log = good_v2_log()
            log[6] = dict(log[6], ci_rel=ci_rel, precision_met=precision_met)
            self.assertEqual(self.check(log), [], (ci_rel, precision_met))
        log = good_v2_log()
        log[6] = dict(log[6], ci_rel=None, precision_met=True)
        self.assertRejects(log, "precision_met true without a ci_rel")
        log[6] = dict(log[6], ci_rel=-0.1, precision_met=None)
        self.assertRejects(log, "ci_rel -0.1 is negative")
        log[6] = {k: v for k, v in log[6].items() if k != "precision_met"}
        self.assertRejects(log, "missing field 'precision_met'")
        log[6] = dict(log[6], precision_met="yes")
        self.assertRejects(log, "$.precision_met: expected boolean or null")

    def test_schema_errors(self):
        log = good_log()
        cases = [
            (dict(log[5], step=50.0), "$.step: expected integer, got 50.0"),
            (dict(log[5], step=True), "$.step: expected integer, got true"),
            (dict(log[5], images=-8), "$.images: -8 is below the minimum 0"),
            (dict(log[5], loss=None), "$.loss: expected number, got null"),
            (dict(log[5], note="x"), "$: unexpected field 'note'"),
            ({k: v for k, v in log[5].items() if k != "loss"}, "$: missing field 'loss'"),
            (dict(log[1], torch=2), '$.torch: expected string or null, got 2'),
            (dict(log[5], event="samples"), '$: event "samples" is not one of'),
            (dict(log[9], reason="done"), '$.reason: "done" is not one of'),
            ([1, 2], "$: expected object, got [1, 2]"),
        ]
        for bad, expected in cases:
            with self.subTest(expected=expected):
                messages = validate_events.schema_errors(bad, SCHEMA)
                self.assertTrue(any(m.startswith(expected) for m in messages), messages)

    def test_order_errors(self):
        log = good_log()
        self.assertRejects(log[1:], "the first event must be hello")
        self.assertRejects(log + [sample(8, 150)], "sample after end")
        self.assertRejects(log[:-1], "does not finish with an end event")
        self.assertEqual(self.check(log[:-1], partial=True), [])
        self.assertRejects(log[:3] + log[4:], "window_start before release")
        self.assertRejects(log[:2] + log[3:], "release before ready")
        self.assertRejects(log[:4] + log[5:], "sample before window_start")
        self.assertRejects(log[:7] + [log[7], sample(6, 150)] + log[8:], "sample after window_end")
        self.assertRejects(log[:7] + log[8:], "end reason window_done without a window_end")
        self.assertRejects(log[:9] + [ev("end", 7, reason="aborted", exit_code=3)], "aborted after release")
        self.assertRejects(log[:9] + [ev("end", 7, reason="window_done", exit_code=1)], "must have exit_code 0")
        self.assertRejects(log[:9] + [ev("end", 7, reason="oom", exit_code=4)], "without an error of kind oom")
        self.assertRejects(log[:9] + [ev("end", 7, reason="error", exit_code=1)], "without an error event")
        self.assertRejects(log[:5] + [dict(sample(5, 50), job=1)] + log[6:], "job is 1, earlier lines say 0")
        self.assertRejects(log[:5] + [sample(3.5, 50)] + log[6:], "mono goes backwards")
        self.assertRejects(log[:4] + [ev("release", 4)] + log[4:], "a second release event")
        self.assertRejects([], "no events")

    def test_bad_json_line(self):
        messages = validate_events.validate_lines(lines(good_log()[:3]) + ["{oops"], SCHEMA)[0]
        self.assertIn((4, "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
                      messages)


class CommandLineTest(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run([sys.executable, os.path.join(WORKLOADS, "validate_events.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_exit_status_and_messages(self):
        d = tempdir(self)
        good, bad = os.path.join(d, "good.jsonl"), os.path.join(d, "bad.jsonl")
        with open(good, "w") as f:
            f.write("\n".join(lines(good_log())) + "\n")
        log = good_log()
        log[5]["loss"] = "high"
        with open(bad, "w") as f:
            f.write("\n".join(lines(log)) + "\n")
        result = self.run_cli(good)
        self.assertEqual((result.returncode, result.stdout), (0, f"{good}: 10 events ok\n"))
        result = self.run_cli(good, bad)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{bad}:6: $.loss: expected number, got \"high\"", result.stderr)
        self.assertEqual(self.run_cli(os.path.join(d, "missing.jsonl")).returncode, 1)
        self.assertEqual(self.run_cli().returncode, 2)


if __name__ == "__main__":
    unittest.main()
