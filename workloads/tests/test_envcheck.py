import json
import os
import platform
import subprocess
import sys
import unittest

from workloads.tests.util import WORKLOADS, tempdir

SCRIPT = os.path.join(WORKLOADS, "envcheck.py")


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout


class EnvCheck(unittest.TestCase):
    def lock(self, d, text):
        path = os.path.join(d, "environment.lock")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_a_matching_host_passes(self):
        d = tempdir(self)
        code, out = run("--lock", self.lock(d, f"# comment\npython=={platform.python_version()}\n"))
        self.assertEqual(code, 0, out)
        self.assertEqual(json.loads(out)["differs"], [])

    def test_a_different_or_missing_package_is_named(self):
        d = tempdir(self)
        code, out = run("--lock", self.lock(d, "python==0.0.1\nno-such-distribution-xyz==1.0\n"))
        self.assertEqual(code, 1, out)
        r = json.loads(out)
        self.assertEqual(r["differs"], [f"python: {platform.python_version()} here, 0.0.1 locked",
                                        "no-such-distribution-xyz: not installed here, 1.0 locked"])
        self.assertIsNone(r["here"]["no-such-distribution-xyz"])

    def test_a_malformed_lock_names_its_line(self):
        for text, want in [("python==3\ntorch 2.11\n", ":2: expected `name==version`"),
                           ("torch==1\ntorch==2\n", ":2: torch is locked twice"),
                           ("# nothing\n", "the lock names no package")]:
            d = tempdir(self)
            code, out = run("--lock", self.lock(d, text))
            self.assertEqual(code, 2, out)
            self.assertIn(want, json.loads(out)["error"])

    def test_the_shipped_lock_parses_and_print_writes_that_format(self):
        sys.path.insert(0, WORKLOADS)
        import envcheck
        lock = envcheck.read_lock(envcheck.DEFAULT_LOCK)
        self.assertEqual(list(lock)[:1], ["python"])
        self.assertTrue({"torch", "torchvision", "timm", "numpy", "pillow"} <= set(lock))
        code, out = run("--print")
        self.assertEqual(code, 0)
        d = tempdir(self)
        printed = envcheck.read_lock(self.lock(d, out))
        self.assertEqual(list(printed), ["python"] + envcheck.PACKAGES)


if __name__ == "__main__":
    unittest.main()
