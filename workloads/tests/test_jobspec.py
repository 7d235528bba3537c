import contextlib
import io
import json
import unittest

import jobspec
import train
from workloads.tests.util import DELETE, JOB, job, tempdir, write_json


class JobFileTest(unittest.TestCase):
    def load(self, obj, name="job-1.json"):
        path = write_json(tempdir(self), name, obj)
        return jobspec.load_job_file(path)[0], path

    def error(self, obj):
        with self.assertRaises(jobspec.JobError) as cm:
            self.load(obj, "bad.json")
        return str(cm.exception)

    def test_runner_job_file(self):
        j, _ = self.load(JOB)
        self.assertEqual(j.model, "resnet26")
        self.assertEqual(j.data.source, "generated")
        self.assertEqual(j.data.train_images, 5000)
        self.assertEqual(j.data.val_images, 1000)
        self.assertEqual(j.data.classes, 10)
        self.assertIsNone(j.training.input_size)
        self.assertEqual((j.protocol.kind, j.protocol.warmup_steps, j.protocol.window_seconds), ("quick", 10, 30.0))
        self.assertEqual(j.to_dict(), JOB)

    def test_precision_target_and_max_window(self):
        obj = job(protocol__precision_target=0.01, protocol__max_window_seconds=120.0)
        j, _ = self.load(obj)
        self.assertEqual((j.protocol.precision_target, j.protocol.max_window_seconds), (0.01, 120.0))
        self.assertEqual(j.to_dict(), obj)
        # Missing, they are null (as serde reads them).
        j, _ = self.load(job(protocol__precision_target=DELETE, protocol__max_window_seconds=DELETE))
        self.assertIsNone(j.protocol.precision_target)
        self.assertEqual(j.to_dict(), JOB)

    def test_paper_protocol_and_optional_fields(self):
        j, _ = self.load(job(protocol={"kind": "paper", "epochs": 5, "sample_every": 50},
                             data__path=DELETE, data__source="synthetic", training__input_size=DELETE))
        self.assertEqual((j.protocol.kind, j.protocol.epochs), ("paper", 5))
        self.assertIsNone(j.data.path)
        self.assertIsNone(j.training.input_size)

    def test_errors_name_the_file_and_field(self):
        cases = {
            "training.lr: expected a finite number": job(training__lr="0.1"),
            "batch_size: expected a non-negative integer": job(batch_size=1.5),
            "job: expected a non-negative integer": job(job=True),
            "training.channels_last: expected true or false": job(training__channels_last=0),
            "data.fraction: must be in (0, 1]": job(data__fraction=0),
            "model: missing field": job(model=DELETE),
            "training.seed: missing field": job(training__seed=DELETE),
            "data.colour: unknown field": job(data__colour="red"),
            "protocol.kind: expected one of paper, quick": job(protocol={"kind": "slow", "sample_every": 1}),
            "protocol.epochs: unknown field": job(protocol={"kind": "quick", "warmup_steps": 1,
                                                            "window_seconds": 1, "sample_every": 1, "epochs": 1}),
            "protocol.window_seconds: must be positive": job(protocol__window_seconds=0),
            "protocol_version: this program speaks version 2": job(protocol_version=1),
            "protocol.precision_target: needs max_window_seconds too": job(protocol__precision_target=0.01),
            "protocol.max_window_seconds: needs precision_target too": job(protocol__max_window_seconds=60.0),
            "protocol.precision_target: must be in (0, 0.5]":
                job(protocol__precision_target=0.6, protocol__max_window_seconds=60.0),
            "protocol.max_window_seconds: must be at least window_seconds (30.0)":
                job(protocol__precision_target=0.01, protocol__max_window_seconds=20.0),
            "protocol.precision_target: expected a finite number or null":
                job(protocol__precision_target="1%", protocol__max_window_seconds=60.0),
            "data.path: required for data source generated": job(data__path=None),
            "data.source: expected one of": job(data__source="s3"),
            "data.format: expected one of png, jpeg": job(data__format="gif"),
            "training.precision: expected one of fp32, amp": job(training__precision="fp16"),
            "training.input_size: must be at least 1": job(training__input_size=0),
            "training.workers: expected a non-negative integer": job(training__workers=-1),
            "the job: expected an object": [1, 2],
        }
        for expected, obj in cases.items():
            with self.subTest(expected=expected):
                message = self.error(obj)
                self.assertIn("bad.json: ", message)
                self.assertIn(expected, message)

    def test_unreadable_files(self):
        d = tempdir(self)
        with self.assertRaisesRegex(jobspec.JobError, "missing.json: cannot read the job file"):
            jobspec.load_job_file(d + "/missing.json")
        path = d + "/broken.json"
        with open(path, "w") as f:
            f.write('{"model": ')
        with self.assertRaisesRegex(jobspec.JobError, "broken.json: not valid JSON"):
            jobspec.load_job_file(path)


class CommandLineTest(unittest.TestCase):
    def test_defaults_without_a_job_file(self):
        j, opts = jobspec.parse_args([])
        self.assertEqual((j.model, j.batch_size, j.data.source, j.data.name), ("resnet50", 128, "synthetic", "imagenet"))
        self.assertAlmostEqual(j.training.lr, 0.05)
        self.assertEqual((j.training.momentum, j.training.weight_decay, j.training.label_smoothing),
                         (0.9, 2e-5, 0.1))
        self.assertEqual((j.training.workers, j.training.seed, j.training.num_classes), (4, 42, 1000))
        self.assertEqual(j.protocol.kind, "quick")
        self.assertEqual(j.events_path, "-")
        self.assertEqual((opts.device, opts.no_wait, opts.job_file), ("cuda", False, None))

    def test_manual_job(self):
        j, opts = jobspec.parse_args(["--model", "resnet152", "--data", "synthetic", "--batch-size", "32",
                                      "--protocol", "quick", "--window-seconds", "20", "--device", "cpu",
                                      "--dataset", "cifar10", "--no-validate", "--channels-last"])
        self.assertEqual((j.model, j.batch_size, j.protocol.window_seconds), ("resnet152", 32, 20.0))
        self.assertAlmostEqual(j.training.lr, 0.1 * 32 / 256)
        self.assertEqual((j.data.image_size, j.data.train_count, j.data.format), (32, 50000, "png"))
        self.assertFalse(j.training.validate_every_epoch)
        self.assertTrue(j.training.channels_last)
        self.assertEqual(opts.device, "cpu")

    def test_flags_override_the_job_file(self):
        path = write_json(tempdir(self), "job.json", JOB)
        j, opts = jobspec.parse_args(["--job-file", path])
        self.assertEqual(j.to_dict(), JOB)
        self.assertEqual(opts.job_file, path)
        j, _ = jobspec.parse_args(["--job-file", path, "--batch-size", "64", "--protocol", "paper",
                                   "--events", "-", "--model", "efficientnetv2_s"])
        self.assertEqual((j.batch_size, j.model, j.events_path), (64, "efficientnetv2_s", "-"))
        self.assertAlmostEqual(j.training.lr, 0.025)
        self.assertEqual((j.protocol.kind, j.protocol.epochs, j.protocol.sample_every), ("paper", 5, 50))
        self.assertEqual(j.data.path, "/tmp/cache")

    def test_precision_flags(self):
        j, _ = jobspec.parse_args(["--protocol", "quick", "--window-seconds", "20", "--precision-target", "0.01",
                                   "--max-window-seconds", "120"])
        self.assertEqual((j.protocol.precision_target, j.protocol.max_window_seconds), (0.01, 120.0))
        with self.assertRaisesRegex(jobspec.JobError, "--precision-target does not apply to the paper protocol"):
            jobspec.parse_args(["--protocol", "paper", "--precision-target", "0.01"])

    def test_flag_for_the_other_protocol(self):
        with self.assertRaisesRegex(jobspec.JobError, "--epochs does not apply to the quick protocol"):
            jobspec.parse_args(["--protocol", "quick", "--epochs", "3"])

    def test_bad_values_from_flags(self):
        with self.assertRaisesRegex(jobspec.JobError, "command line: batch_size: must be at least 1"):
            jobspec.parse_args(["--batch-size", "0"])
        with self.assertRaisesRegex(jobspec.JobError, "command line: data.path: required"):
            jobspec.parse_args(["--data", "imagefolder"])

    def test_job_file_errors_name_the_file_even_with_flags(self):
        path = write_json(tempdir(self), "job.json", job(training__lr=-1))
        with self.assertRaisesRegex(jobspec.JobError, r"job\.json: training\.lr: must be positive"):
            jobspec.parse_args(["--job-file", path, "--model", "resnet50"])


class TrainEntryTest(unittest.TestCase):
    """train.py's entry point, up to where it would need PyTorch."""

    def run_main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = train.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_bad_job_file_exits_2_with_one_line(self):
        path = write_json(tempdir(self), "job-3.json", job(batch_size="big"))
        code, out, err = self.run_main(["--job-file", path])
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertEqual(err, f"train.py: {path}: batch_size: expected a non-negative integer, got \"big\"\n")

    def test_dump_job(self):
        path = write_json(tempdir(self), "job.json", JOB)
        code, out, _ = self.run_main(["--job-file", path, "--dump-job", "--seed", "7"])
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out), job(training__seed=7))


if __name__ == "__main__":
    unittest.main()
