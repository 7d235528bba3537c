"""workloads/requirements.txt (what a GPU host installs) and workloads/environment.lock (what
the runner checks a host against) pin the same versions."""
import os
import re
import unittest

from workloads.tests.util import WORKLOADS, tempdir

REQUIREMENTS = os.path.join(WORKLOADS, "requirements.txt")
TORCH_INDEX = "https://download.pytorch.org/whl/cu130"


def read_requirements(path):
    """`({name: version}, [option lines])`: each requirement must be pinned with `==`."""
    pins, options = {}, []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f.read().splitlines(), 1):
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("-"):
                options.append(line)
                continue
            m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)", line)
            if not m:
                raise AssertionError(f"{path}:{n}: expected `name==version`, found {raw!r}")
            name = m.group(1).lower().replace("_", "-")
            if name in pins:
                raise AssertionError(f"{path}:{n}: {name} is pinned twice")
            pins[name] = m.group(2)
    return pins, options


def public(version):
    """`2.11.0+cu130` → `2.11.0`: importlib.metadata reads the installed torch without the
    local part, as environment.lock records it."""
    return version.split("+", 1)[0]


class Requirements(unittest.TestCase):
    def setUp(self):
        import envcheck  # beside the tests' package, on sys.path (workloads/tests/__init__.py)
        self.lock = envcheck.read_lock(envcheck.DEFAULT_LOCK)
        self.packages = envcheck.PACKAGES
        self.pins, self.options = read_requirements(REQUIREMENTS)

    def test_every_locked_package_is_pinned_at_its_locked_version(self):
        for name, version in self.lock.items():
            if name == "python":
                continue
            self.assertIn(name, self.pins, f"{name}=={version} is locked but not in requirements.txt")
            self.assertEqual(public(self.pins[name]), version, f"{name}: requirements.txt and environment.lock differ")

    def test_every_pin_is_locked_and_checked(self):
        for name, version in self.pins.items():
            self.assertIn(name, self.lock, f"{name}=={version} is pinned but environment.lock does not lock it")
            self.assertIn(name, self.packages, f"envcheck.py does not print {name}")

    def test_the_cuda_builds_come_from_pytorchs_index(self):
        self.assertIn(f"--extra-index-url {TORCH_INDEX}", self.options)
        for name in ("torch", "torchvision"):
            self.assertTrue(self.pins[name].endswith("+cu130"), f"{name}=={self.pins[name]}: not the CUDA 13.0 build")

    def test_the_python_it_is_for_is_the_locked_one(self):
        major_minor = ".".join(self.lock["python"].split(".")[:2])
        with open(REQUIREMENTS, encoding="utf-8") as f:
            text = f.read()
        self.assertIn(f"python{major_minor} -m venv", text)
        self.assertIn(f"python=={self.lock['python']}", text)

    def test_a_malformed_or_unpinned_line_is_refused(self):
        for text, want in [("torch>=2\n", ":1: expected `name==version`"), ("numpy==1\nnumpy==2\n", ":2: numpy is pinned twice")]:
            path = os.path.join(tempdir(self), "requirements.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            with self.assertRaises(AssertionError) as e:
                read_requirements(path)
            self.assertIn(want, str(e.exception))


if __name__ == "__main__":
    unittest.main()
