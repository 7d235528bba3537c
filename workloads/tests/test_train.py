import dataclasses
import io
import json
import os
import subprocess
import sys
import time
import unittest
from unittest import mock

import datagen
import events
import itertime
import jobspec
import train
import validate_events
from workloads.tests.util import WORKLOADS, have, tempdir


class OutOfMemoryError(RuntimeError):
    """Named like torch.cuda.OutOfMemoryError."""


class HelpersTest(unittest.TestCase):
    def test_imports_without_torch(self):
        code = "import sys; sys.path.insert(0, %r); import train, jobspec, events, datagen; " \
               "print('torch' in sys.modules)" % WORKLOADS
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.strip(), "False")

    def test_scan_split(self):
        root = tempdir(self)
        for rel in ("train/b/2.png", "train/b/1.JPG", "train/a/x.jpeg", "train/a/notes.txt", "val/b/v.png"):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").close()
        samples, classes = train.scan_split(os.path.join(root, "train"))
        self.assertEqual(classes, {"a": 0, "b": 1})
        self.assertEqual([(os.path.relpath(p, root), c) for p, c in samples],
                         [("train/a/x.jpeg", 0), ("train/b/1.JPG", 1), ("train/b/2.png", 1)])
        val, _ = train.scan_split(os.path.join(root, "val"), classes)
        self.assertEqual(val[0][1], 1)
        os.makedirs(os.path.join(root, "val", "c"))
        with self.assertRaisesRegex(train.DataError, "a class the training split does not have"):
            train.scan_split(os.path.join(root, "val"), classes)
        with self.assertRaisesRegex(train.DataError, "no such directory"):
            train.scan_split(os.path.join(root, "test"))

    def test_subset(self):
        items = list(range(100))
        part = train.subset(items, 0.1, seed=42)
        self.assertEqual(part, train.subset(items, 0.1, seed=42))
        self.assertEqual(len(part), 10)
        self.assertEqual(part, sorted(part))
        self.assertIs(train.subset(items, 1.0, seed=42), items)

    def test_classify(self):
        self.assertEqual(train.classify(OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"))[:3],
                         ("oom", "oom", 4))
        self.assertEqual(train.classify(RuntimeError("CUDA error: out of memory"))[:3], ("oom", "oom", 4))
        self.assertEqual(train.classify(train.DataError("no images"))[:3], ("data", "error", 1))
        self.assertEqual(train.classify(datagen.DatasetError("disk full"))[:3], ("data", "error", 1))
        self.assertEqual(train.classify(ValueError("bad"))[1:], ("error", 1, "ValueError: bad"))


class RunJobTest(unittest.TestCase):
    """run_job's error handling, with the training itself replaced."""

    def run_failing(self, error):
        job = jobspec.job_from_dict(jobspec.default_job(), "test")
        stream = io.StringIO()
        writer = events.EventWriter(stream, job=0)
        writer.emit("hello", pid=1, protocol_version=1, simulated=False)
        opts = jobspec.Options(device="cpu", no_wait=True, dump_job=False, job_file=None)
        with mock.patch.object(train.Trainer, "run", side_effect=error), \
                mock.patch("sys.stderr", io.StringIO()):
            code = train.run_job(job, opts, writer)
        lines = stream.getvalue().splitlines()
        errors, _ = validate_events.validate_lines(lines, events.load_schema())
        self.assertEqual(errors, [])
        return code, [json.loads(line) for line in lines]

    def test_out_of_memory(self):
        code, log = self.run_failing(OutOfMemoryError("CUDA out of memory"))
        self.assertEqual(code, 4)
        self.assertEqual((log[-2]["event"], log[-2]["kind"]), ("error", "oom"))
        self.assertEqual((log[-1]["reason"], log[-1]["exit_code"]), ("oom", 4))

    def test_data_error(self):
        code, log = self.run_failing(train.DataError("/data/train: no such directory"))
        self.assertEqual(code, 1)
        self.assertEqual((log[-2]["kind"], log[-2]["message"]), ("data", "/data/train: no such directory"))
        self.assertEqual(log[-1]["reason"], "error")

    def test_unexpected_exception(self):
        code, log = self.run_failing(ZeroDivisionError("division by zero"))
        self.assertEqual(code, 1)
        self.assertEqual((log[-2]["kind"], log[-2]["message"]), ("exception", "ZeroDivisionError: division by zero"))


class FakeLoss:
    def item(self):
        return 2.5


class FakeSource:
    """Batches of 4 "images", 7 iterations an epoch, each taking about 2 ms to train."""

    def epoch(self, partial=False):
        for _ in range(7):
            time.sleep(0.0005)
            yield "x", "y"


class WindowLoopTest(unittest.TestCase):
    """Protocol 2's measured loop (measure_window) on the host clock, training replaced."""

    def run_window(self, no_wait, stdin_text="", window=0.05, min_iterations=10, target=None, max_window=None,
                   step=None):
        job = jobspec.job_from_dict(jobspec.default_job(batch_size=4), "test")
        job = dataclasses.replace(job, protocol=dataclasses.replace(
            job.protocol, window_seconds=window, min_iterations=min_iterations, precision_target=target,
            max_window_seconds=max_window))
        stream = io.StringIO()
        writer = events.EventWriter(stream, job=0)
        writer.emit("hello", pid=1, protocol_version=2, simulated=False)
        writer.emit("ready", setup_seconds=0.1, warmup_seconds=0.1, warmup_steps=0)
        writer.emit("release")
        opts = jobspec.Options(device="cpu", no_wait=no_wait, dump_job=False, job_file=None)
        trainer = train.Trainer(job, opts, writer, time.monotonic())
        trainer.torch, trainer.device, trainer.cuda = None, "cpu", False
        trainer.stream = train.Stream(FakeSource())
        trainer.train_step = step or (lambda x, y: (time.sleep(0.002), FakeLoss())[1])
        with mock.patch("sys.stdin", io.StringIO(stdin_text)), mock.patch("sys.stderr", io.StringIO()):
            trainer.measure_window()
        writer.emit("end", reason="window_done", exit_code=0)
        lines = stream.getvalue().splitlines()
        errors, _ = validate_events.validate_lines(lines, events.load_schema())
        self.assertEqual(errors, [])
        return [json.loads(line) for line in lines]

    def test_self_stop_after_window_met(self):
        log = self.run_window(no_wait=True)
        names = [e["event"] for e in log]
        self.assertEqual(names.count("window_met"), 1)
        met = next(e for e in log if e["event"] == "window_met")
        self.assertGreaterEqual(met["step"], 10)
        self.assertGreaterEqual(met["seconds"], 0.05)
        chunks = [e for e in log if e["event"] == "iterations"]
        steps, ends, images = itertime.decode(chunks)
        end = log[-2]
        self.assertEqual(end["event"], "window_end")
        # Every iteration trained is recorded, with its images and its data wait.
        self.assertEqual(steps, list(range(end["step"])))
        self.assertEqual(sum(images), end["images"])
        self.assertEqual(sum(len(c["data_wait_us"]) for c in chunks), end["step"])
        self.assertTrue(all(w > 0 for c in chunks for w in c["data_wait_us"]))
        # The one iteration after the stop: trained after window_met.
        self.assertGreater(end["step"], met["step"])
        start = next(e for e in log if e["event"] == "window_start")
        self.assertAlmostEqual(end["seconds"], ends[-1] - chunks[0]["base_mono"], places=5)
        self.assertLessEqual(chunks[0]["base_mono"], start["mono"])

    def test_without_a_target_the_interval_is_reported(self):
        log = self.run_window(no_wait=True, min_iterations=30)
        met = next(e for e in log if e["event"] == "window_met")
        self.assertIsNone(met["precision_met"])
        self.assertIsInstance(met["ci_rel"], float)  # 30 iterations or more: 6 batches
        chunks = [e for e in log if e["event"] == "iterations"]
        steps, ends, images = itertime.decode(chunks)
        start = chunks[0]["base_mono"]
        n = met["step"]
        _, ci_rel = itertime.throughput_ci(start, ends[:n], images[:n])
        self.assertAlmostEqual(met["ci_rel"], ci_rel, delta=1e-4)  # chunks keep whole µs

    def test_a_precision_target_met_ends_the_window_early(self):
        # Steady iterations: the interval is narrow as soon as there is one (20 iterations).
        log = self.run_window(no_wait=True, window=0.02, min_iterations=5, target=0.25, max_window=30.0)
        met = next(e for e in log if e["event"] == "window_met")
        self.assertIs(met["precision_met"], True)
        self.assertLessEqual(met["ci_rel"], 0.25)
        self.assertGreaterEqual(met["step"], 20)
        self.assertLess(met["seconds"], 30.0)

    def test_the_maximum_window_ends_a_noisy_one(self):
        # The job slows down fourfold after 30 iterations: ±0.1% is out of reach in 0.3 s.
        count = [0]

        def noisy(x, y):
            count[0] += 1
            time.sleep(0.002 if count[0] <= 30 else 0.008)
            return FakeLoss()

        log = self.run_window(no_wait=True, window=0.05, min_iterations=5, target=0.001, max_window=0.3,
                              step=noisy)
        met = next(e for e in log if e["event"] == "window_met")
        self.assertIs(met["precision_met"], False)
        self.assertGreater(met["ci_rel"], 0.001)
        self.assertGreaterEqual(met["seconds"], 0.3)
        self.assertLess(met["seconds"], 0.3 + 0.1)  # checked at every iteration past the maximum

    def test_stop_line_before_the_window_is_met(self):
        log = self.run_window(no_wait=False, stdin_text="stop\n", window=30.0)
        names = [e["event"] for e in log]
        self.assertNotIn("window_met", names)
        self.assertIn("iterations", names)
        self.assertGreaterEqual(log[-2]["step"], 1)


@unittest.skipUnless(have("torch", "timm", "torchvision", "numpy", "PIL"), "needs PyTorch and timm")
class TrainOnCpuTest(unittest.TestCase):
    """train.py end to end on the CPU with a tiny model, as the runner starts it."""

    def run_train(self, stdin, *flags):
        events_path = os.path.join(tempdir(self), "job-0.events.jsonl")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        result = subprocess.run(
            [sys.executable, os.path.join(WORKLOADS, "train.py"), "--device", "cpu", "--model", "resnet18",
             "--input-size", "32", "--dataset", "cifar10", "--events", events_path, *flags],
            input=stdin, capture_output=True, text=True, timeout=300, env=env)
        with open(events_path) as f:
            lines = f.read().splitlines()
        errors, _ = validate_events.validate_lines(lines, events.load_schema())
        self.assertEqual(errors, [], result.stderr)
        return result.returncode, [json.loads(line) for line in lines]

    def test_quick_synthetic(self):
        # --no-wait: released at once, and the job ends the window itself once it is met.
        code, log = self.run_train("", "--no-wait", "--data", "synthetic", "--batch-size", "2",
                                   "--fraction", "0.001", "--protocol", "quick", "--window-seconds", "1",
                                   "--warmup-steps", "2", "--min-iterations", "3")
        self.assertEqual(code, 0)
        names = [e["event"] for e in log]
        self.assertEqual(names[:5], ["hello", "versions", "ready", "release", "window_start"])
        self.assertEqual(names[-2:], ["window_end", "end"])
        self.assertIn("iterations", names)
        self.assertIn("window_met", names)
        self.assertEqual(log[2]["warmup_steps"], 2)
        self.assertGreaterEqual(log[-2]["seconds"], 1.0)
        self.assertEqual(log[-1]["reason"], "window_done")

    def test_paper_generated(self):
        cache = tempdir(self)
        code, log = self.run_train("release\n", "--data", "generated", "--data-path", cache,
                                   "--fraction", "0.0004", "--batch-size", "4", "--workers", "1",
                                   "--protocol", "paper", "--epochs", "2", "--sample-every", "2")
        self.assertEqual(code, 0)
        epochs = [e for e in log if e["event"] == "epoch_end"]
        self.assertEqual([e["epoch"] for e in epochs], [0, 1])
        self.assertEqual([e["images"] for e in epochs], [20, 20])
        self.assertIsNotNone(epochs[0]["val_top1"])
        self.assertEqual(sum(e["images"] for e in log if e["event"] == "sample"), 40)
        self.assertEqual(log[-1]["reason"], "completed")
        self.assertEqual(os.listdir(cache).count("cifar10-32px-png-t20-v4-c10-s42"), 1)

    def test_abort(self):
        code, log = self.run_train("", "--data", "synthetic", "--batch-size", "2", "--fraction", "0.001",
                                   "--warmup-steps", "1")
        self.assertEqual(code, 3)
        self.assertEqual([e["event"] for e in log], ["hello", "versions", "ready", "end"])
        self.assertEqual(log[-1]["reason"], "aborted")


if __name__ == "__main__":
    unittest.main()
