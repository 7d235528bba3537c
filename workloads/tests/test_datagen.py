import contextlib
import io
import json
import os
import unittest
from unittest import mock

import datagen
import jobspec
import loadcost
from workloads.tests.util import JOB, have, job, tempdir

TINY = datagen.SetParams(name="tiny", image_size=8, format="png", train=12, val=5, classes=3, seed=7)


def quiet(_message):
    pass


class ParamsTest(unittest.TestCase):
    def test_params_for_job(self):
        params = datagen.params_for_job(jobspec.job_from_dict(JOB, "job.json"))
        self.assertEqual(params, datagen.SetParams("cifar10", 32, "png", 5000, 1000, 10, 42))
        self.assertEqual(params.dirname, "cifar10-32px-png-t5000-v1000-c10-s42")
        unknown = jobspec.job_from_dict(job(data__name="mine", data__train_count=4, data__fraction=1.0,
                                            data__image_size=0, data__format="jpeg"), "job.json")
        self.assertEqual(datagen.params_for_job(unknown),
                         datagen.SetParams("mine", 0, "jpeg", 4, 10000, 4, 42))  # classes cut to images

    def test_layout_names(self):
        self.assertEqual(TINY.relpath("train", 4), "train/c0001/0000004.png")
        self.assertEqual(datagen.SetParams("x", 0, "jpeg", 1, 0, 12345, 0).relpath("val", 12346),
                         "val/c00001/0012346.jpg")

    def test_bad_params(self):
        with self.assertRaises(datagen.DatasetError):
            datagen.SetParams("x", 8, "gif", 1, 0, 1, 0)
        with self.assertRaises(datagen.DatasetError):
            datagen.SetParams("../x", 8, "png", 1, 0, 1, 0)


@unittest.skipUnless(have("numpy", "PIL"), "numpy and Pillow are needed to generate images")
class GenerateTest(unittest.TestCase):
    def make(self, params=TINY, workers=1):
        return datagen.ensure(tempdir(self), params, workers=workers, log=quiet)

    def files(self, root):
        out = {}
        for dirpath, _, names in os.walk(root):
            for name in names:
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, root)] = f.read()
        return out

    def test_deterministic(self):
        first = self.make()
        with mock.patch.object(datagen, "CHUNK", 5):  # 4 chunks over 2 processes
            second = self.make(workers=2)
        self.assertEqual(os.path.basename(first), TINY.dirname)
        a, b = self.files(first), self.files(second)
        self.assertEqual(a.keys(), b.keys())
        self.assertEqual(a, b)  # every byte, SHA256SUMS and dataset.json included
        other = self.files(self.make(datagen.SetParams(**{**TINY.__dict__, "seed": 8})))
        self.assertNotEqual(a["SHA256SUMS"], other["SHA256SUMS"])

    def test_layout_and_checksums(self):
        from PIL import Image
        root = self.make()
        with open(os.path.join(root, "dataset.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["params"], TINY.__dict__)
        self.assertEqual(meta["files"], 17)
        self.assertEqual(sorted(os.listdir(os.path.join(root, "train"))), ["c0000", "c0001", "c0002"])
        self.assertEqual(len(os.listdir(os.path.join(root, "train", "c0000"))), 4)
        self.assertEqual(len(os.listdir(os.path.join(root, "val", "c0001"))), 2)
        with Image.open(os.path.join(root, TINY.relpath("val", 4))) as image:
            self.assertEqual((image.format, image.size, image.mode), ("PNG", (8, 8), "RGB"))
        self.assertEqual(datagen.verify(root, TINY, full=True), meta)

    def test_variable_size_jpeg(self):
        from PIL import Image
        params = datagen.SetParams("var", 0, "jpeg", 2, 1, 2, 1)
        root = self.make(params)
        sizes = set()
        for i in range(2):
            with Image.open(os.path.join(root, params.relpath("train", i))) as image:
                self.assertEqual(image.format, "JPEG")
                sizes.add(image.size)
                self.assertTrue(all(datagen.VARIABLE_SIDES[0] <= s <= datagen.VARIABLE_SIDES[1] for s in image.size))
        self.assertEqual(len(sizes), 2)

    def test_verify_finds_damage(self):
        root = self.make()
        victim = os.path.join(root, TINY.relpath("train", 3))
        with open(victim, "r+b") as f:
            data = f.read()
            f.seek(0)
            f.write(bytes([data[0] ^ 1]) + data[1:])
        datagen.verify(root, TINY)  # same size: only the full check sees it
        with self.assertRaisesRegex(datagen.DatasetError, "0000003.png does not match its checksum"):
            datagen.verify(root, TINY, full=True)
        os.remove(victim)
        with self.assertRaisesRegex(datagen.DatasetError, "0000003.png is missing"):
            datagen.verify(root, TINY)
        with self.assertRaisesRegex(datagen.DatasetError, "made with other parameters"):
            datagen.verify(root, datagen.SetParams(**{**TINY.__dict__, "val": 4}))
        with open(os.path.join(root, "SHA256SUMS"), "a") as f:
            f.write("x")
        with self.assertRaisesRegex(datagen.DatasetError, "SHA256SUMS does not match"):
            datagen.verify(root, TINY)

    def test_ensure_reuses_and_repairs(self):
        cache = tempdir(self)
        root = datagen.ensure(cache, TINY, workers=1, log=quiet)
        sums = os.path.join(root, "SHA256SUMS")
        stamp = os.stat(sums).st_mtime_ns
        self.assertEqual(datagen.ensure(cache, TINY, workers=1, log=quiet), root)
        self.assertEqual(os.stat(sums).st_mtime_ns, stamp)  # reused, not rewritten
        os.remove(os.path.join(root, TINY.relpath("train", 0)))
        messages = []
        self.assertEqual(datagen.ensure(cache, TINY, workers=1, log=messages.append), root)
        self.assertIn("generating the set again", messages[0])
        datagen.verify(root, TINY, full=True)
        self.assertEqual(sorted(n for n in os.listdir(cache) if not n.endswith(".lock")), [TINY.dirname])

    def test_ensure_leaves_foreign_directories_alone(self):
        cache = tempdir(self)
        os.makedirs(os.path.join(cache, TINY.dirname, "train"))
        with self.assertRaisesRegex(datagen.DatasetError, "no dataset.json"):
            datagen.ensure(cache, TINY, workers=1, log=quiet)
        self.assertTrue(os.path.isdir(os.path.join(cache, TINY.dirname, "train")))

    def test_command_line(self):
        cache = tempdir(self)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = datagen.main(["generate", "--out", cache, "--name", "cifar10", "--fraction", "0.0002",
                                 "--workers", "1", "--seed", "3"])
        self.assertEqual(code, 0, err.getvalue())
        root = out.getvalue().strip()
        self.assertEqual(root, os.path.join(cache, "cifar10-32px-png-t10-v2-c10-s3"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(datagen.main(["verify", root, "--full"]), 0)
        self.assertIn("12 files", out.getvalue())
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(datagen.main(["verify", cache]), 1)
        self.assertIn("no dataset.json", err.getvalue())


@unittest.skipUnless(have("numpy", "PIL"), "numpy and Pillow are needed to generate images")
class PicturesTest(unittest.TestCase):
    CIFAR = datagen.SetParams("cifar10", 32, "png", 50000, 10000, 10, 42)
    IMAGENET = datagen.SetParams("imagenet", 0, "jpeg", 1281167, 50000, 1000, 42)

    def test_styles(self):
        self.assertEqual(datagen.style_for(self.CIFAR), "cifar10-like")
        self.assertEqual(datagen.style_for(datagen.SetParams("imagenet64", 64, "png", 9, 0, 3, 0)), "imagenet64-like")
        self.assertEqual(datagen.style_for(self.IMAGENET), "photo")
        self.assertEqual(datagen.style_for(TINY), "cifar10-like")

    def test_file_sizes_like_the_real_sets(self):
        cifar = [len(datagen.image_file(self.CIFAR, "train", i)[0]) for i in range(40)]
        self.assertTrue(1800 < sum(cifar) / len(cifar) < 3000, cifar)  # CIFAR-10's PNG files: 2-3 KB
        photo = datagen.SetParams("photo", 0, "jpeg", 1000, 0, 10, 42)
        sizes = [datagen.image_file(photo, "train", i) for i in range(12)]
        per_pixel = sum(len(b) for b, _ in sizes) / sum(w * h for _, (w, h) in sizes)
        self.assertTrue(0.3 < per_pixel < 1.0, per_pixel)  # ImageNet: about 110 KB at 500 x 375

    def test_variable_sizes_like_imagenet(self):
        import numpy as np
        sizes = [datagen.picture_size(self.IMAGENET, np.random.default_rng([1, i])) for i in range(2000)]
        heights, widths = sorted(h for h, _ in sizes), sorted(w for _, w in sizes)
        self.assertEqual((widths[1000], heights[1000]), (500, 375))  # the median picture: 500 x 375
        self.assertTrue(all(datagen.VARIABLE_SIDES[0] <= s <= datagen.VARIABLE_SIDES[1]
                            for size in sizes for s in size))
        self.assertTrue(0.1 < sum(h > w for h, w in sizes) / len(sizes) < 0.3)  # some upright
        self.assertGreater(len(set(sizes)), 100)
        self.assertEqual(datagen.picture_size(self.CIFAR, None), (32, 32))

    def test_pictures_are_not_noise(self):
        import numpy as np
        pixels = datagen.picture(datagen.SetParams("p", 256, "jpeg", 1, 0, 1, 3), "train", 0)
        grey = pixels.astype(np.float64).mean(axis=2)
        power = np.abs(np.fft.rfft2(grey - grey.mean())) ** 2
        fy = np.abs(np.fft.fftfreq(256))[:, None]
        fx = np.fft.rfftfreq(256)[None, :]
        f = np.hypot(fx, fy)
        low, high = power[(f > 0) & (f < 0.05)].mean(), power[f > 0.25].mean()
        self.assertGreater(low / high, 50)  # falls off with frequency like a photograph (1 for noise)
        # Neighbouring pixels are alike; colour channels move together.
        self.assertGreater(np.corrcoef(grey[:, :-1].ravel(), grey[:, 1:].ravel())[0, 1], 0.6)  # noise: 0
        channels = pixels.reshape(-1, 3).T.astype(np.float64)
        self.assertGreater(np.corrcoef(channels).min(), 0.3)

    def test_manifest_summary_and_version(self):
        cache = tempdir(self)
        params = datagen.SetParams("var", 0, "jpeg", 6, 2, 2, 5)
        root = datagen.ensure(cache, params, workers=1, log=quiet)
        meta = datagen.read_meta(root)
        self.assertEqual(meta["format_version"], 2)
        self.assertEqual(meta["style"]["name"], "photo")
        self.assertEqual(meta["summary"]["train"]["files"], 6)
        self.assertEqual(meta["summary"]["val"]["files"], 2)
        sizes = [os.path.getsize(os.path.join(root, params.relpath("train", i))) for i in range(6)]
        self.assertEqual(meta["summary"]["train"]["bytes"]["max"], max(sizes))
        # A set of an older generator is not reused silently: it is made again.
        meta["format_version"] = 1
        with open(os.path.join(root, "dataset.json"), "w") as f:
            json.dump(meta, f)
        with self.assertRaisesRegex(datagen.DatasetError, "format_version 1, expected 2"):
            datagen.verify(root, params)
        messages = []
        datagen.ensure(cache, params, workers=1, log=messages.append)
        self.assertIn("generating the set again", messages[0])
        self.assertEqual(datagen.read_meta(root)["format_version"], 2)


@unittest.skipUnless(have("numpy", "PIL", "torch", "torchvision", "timm"), "PyTorch, torchvision and timm are needed")
class CostTest(unittest.TestCase):
    def test_cost_is_written_beside_the_set(self):
        params = datagen.SetParams("tiny", 16, "png", 12, 0, 3, 1)
        root = datagen.ensure(tempdir(self), params, workers=1, log=quiet)
        result = loadcost.measure_cost(root, images=6, workers=1, batches=2, batch_size=4, model="resnet18",
                                      log=quiet)
        with open(os.path.join(root, loadcost.COST_FILE)) as f:
            self.assertEqual(json.load(f), result)
        for path in ("cuda_path", "cpu_path"):
            one = result["single_core"][path]
            self.assertEqual(one["images"], 6)
            self.assertAlmostEqual(one["total_ms"], one["decode_ms"] + one["transform_ms"], places=3)
        self.assertEqual(result["loader"]["workers"], 1)
        self.assertGreater(result["loader"]["images_per_second"], 0)
        datagen.verify(root, params, full=True)  # the cost file is no part of the set
        with self.assertRaisesRegex(datagen.DatasetError, "fewer training images than one batch"):
            loadcost.measure_cost(root, images=2, workers=0, batches=1, batch_size=64, model="resnet18", log=quiet)


if __name__ == "__main__":
    unittest.main()
