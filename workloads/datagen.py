#!/usr/bin/env python3
"""Deterministic stand-in image datasets: the real dataset's image size, file format and
count, with made-up pictures, so that a job decodes and augments files as it would with
the real data.

A set is written once under a cache directory, in the ImageFolder layout
(`train/c0007/0000042.png`), with `SHA256SUMS` (one line per file, sha256sum format) and
`dataset.json` (its parameters, file count, bytes and the sha256 of SHA256SUMS). The same
parameters give the same bytes with the same numpy and Pillow (their versions are recorded
in dataset.json). Pictures are smooth colour fields with noise; each class has its own
colour layout, so a model can learn the labels. Image i of a split has class i mod classes.

    python3 workloads/datagen.py generate --out CACHE --name cifar10 [--fraction 0.1] [--seed 42]
    python3 workloads/datagen.py verify CACHE/cifar10-32px-png-t5000-v1000-c10-s42 [--full]

Needs numpy and Pillow.
"""

import argparse
import contextlib
import fcntl
import glob
import hashlib
import io
import json
import multiprocessing
import os
import platform
import shutil
import sys
from dataclasses import asdict, dataclass

FORMAT_VERSION = 1
EXTENSIONS = {"png": ".png", "jpeg": ".jpg"}
SPLITS = ("train", "val")
CHUNK = 1000          # images per task of a worker
VARIABLE_SIDES = (240, 500)  # side range of variable-size (ImageNet-like) pictures
JPEG_QUALITY = 90


def _stderr(message):
    print(message, file=sys.stderr, flush=True)


class DatasetError(Exception):
    """A generated set that cannot be made or does not verify."""


@dataclass(frozen=True)
class SetParams:
    name: str
    image_size: int   # 0: variable size
    format: str       # png or jpeg
    train: int
    val: int
    classes: int
    seed: int

    def __post_init__(self):
        if self.format not in EXTENSIONS:
            raise DatasetError(f"unknown format {self.format!r} (expected png or jpeg)")
        if self.image_size < 0 or self.train < 1 or self.val < 0 or self.classes < 1 or self.seed < 0:
            raise DatasetError(f"bad set parameters: {self}")
        if "/" in self.name or self.name.startswith(".") or not self.name:
            raise DatasetError(f"bad set name {self.name!r}")

    @property
    def dirname(self):
        side = f"{self.image_size}px" if self.image_size else "varpx"
        return f"{self.name}-{side}-{self.format}-t{self.train}-v{self.val}-c{self.classes}-s{self.seed}"

    def count(self, split):
        return self.train if split == "train" else self.val

    def relpath(self, split, index):
        width = max(4, len(str(self.classes - 1)))
        return f"{split}/c{index % self.classes:0{width}d}/{index:07d}{EXTENSIONS[self.format]}"


def params_for_job(job):
    """The set a job (jobspec.Job) with `generated` data uses: the declared counts cut to the
    job's fraction, the dataset's classes (the model's when the dataset is unknown), no
    more classes than training images, and the job's seed."""
    data = job.data
    classes = min(data.classes or job.training.num_classes, data.train_images)
    return SetParams(name=data.name, image_size=data.image_size, format=data.format,
                     train=data.train_images, val=data.val_images, classes=classes,
                     seed=job.training.seed)


# --- pictures ---------------------------------------------------------------------------

def picture(params, split, index):
    """The pixels (h, w, 3, uint8) of image `index` of `split`: a function of the
    parameters alone."""
    import numpy as np
    from PIL import Image
    label = index % params.classes
    rng = np.random.default_rng([params.seed, SPLITS.index(split), index])
    class_grid = np.random.default_rng([params.seed, 1 << 20, label]).uniform(0, 255, (6, 6, 3))
    if params.image_size:
        h = w = params.image_size
    else:
        h, w = (int(v) for v in rng.integers(VARIABLE_SIDES[0], VARIABLE_SIDES[1] + 1, size=2))
    grid = (0.6 * class_grid + 0.4 * rng.uniform(0, 255, (6, 6, 3))).astype(np.uint8)
    smooth = np.asarray(Image.fromarray(grid, "RGB").resize((w, h), Image.BILINEAR), dtype=np.int16)
    noise = np.frombuffer(rng.bytes(h * w * 3), np.uint8).reshape(h, w, 3) >> 3  # 0..31
    return np.clip(smooth + noise - 16, 0, 255).astype(np.uint8)


def encode(params, pixels):
    from PIL import Image
    buf = io.BytesIO()
    image = Image.fromarray(pixels, "RGB")
    if params.format == "png":
        image.save(buf, format="PNG", compress_level=6)
    else:
        image.save(buf, format="JPEG", quality=JPEG_QUALITY)
    return buf.getvalue()


def _write_chunk(task):
    """Worker: writes images [start, stop) of a split under root; returns
    [(relpath, sha256 hex, bytes)]."""
    root, params, split, start, stop = task
    out = []
    for index in range(start, stop):
        rel = params.relpath(split, index)
        data = encode(params, picture(params, split, index))
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        out.append((rel, hashlib.sha256(data).hexdigest(), len(data)))
    return out


# --- writing and checking sets ----------------------------------------------------------

def _versions():
    import numpy
    import PIL
    return {"python": platform.python_version(), "numpy": numpy.__version__, "pillow": PIL.__version__}


def _estimate_bytes(params):
    sample = min(16, params.train)
    size = sum(len(encode(params, picture(params, "train", i))) for i in range(sample)) / sample
    return int(size * (params.train + params.val) * 1.05) + (params.train + params.val) * 64


def generate(root, params, workers=None, log=_stderr):
    """Writes the set into the new directory `root` (which must not exist)."""
    needed = _estimate_bytes(params)
    parent = os.path.dirname(os.path.abspath(root))
    free = shutil.disk_usage(parent).free
    if needed > free:
        raise DatasetError(f"{params.dirname} needs about {needed / 1e9:.1f} GB, "
                           f"only {free / 1e9:.1f} GB free under {parent}")
    os.makedirs(root)
    tasks = [(root, params, split, start, min(start + CHUNK, params.count(split)))
             for split in SPLITS for start in range(0, params.count(split), CHUNK)]
    workers = max(1, min(workers or os.cpu_count() or 1, -(-(params.train + params.val) // CHUNK)))
    log(f"generating {params.dirname}: {params.train + params.val} {params.format} files, "
        f"about {needed / 1e9:.2f} GB, {workers} processes")
    entries = []
    if workers == 1:
        for task in tasks:
            entries += _write_chunk(task)
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for done, chunk in enumerate(pool.imap_unordered(_write_chunk, tasks), start=1):
                entries += chunk
                if done % max(1, len(tasks) // 10) == 0:
                    log(f"  {done}/{len(tasks)} chunks")
    entries.sort()
    sums = "".join(f"{sha}  {rel}\n" for rel, sha, _ in entries).encode()
    with open(os.path.join(root, "SHA256SUMS"), "wb") as f:
        f.write(sums)
    meta = {"format_version": FORMAT_VERSION, "params": asdict(params), "files": len(entries),
            "bytes": sum(size for _, _, size in entries),
            "sha256sums": hashlib.sha256(sums).hexdigest(), "generator": _versions()}
    with open(os.path.join(root, "dataset.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return meta


def read_meta(set_dir):
    try:
        with open(os.path.join(set_dir, "dataset.json"), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise DatasetError(f"{set_dir}: no dataset.json, so not a generated set") from None
    except (OSError, ValueError) as e:
        raise DatasetError(f"{set_dir}/dataset.json: unreadable: {e}") from None


def _hash_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(set_dir, params=None, full=False, workers=None):
    """Checks a set; returns its dataset.json. Always: the parameters (when given), the
    sha256 of SHA256SUMS, and that every listed file exists with the recorded total size.
    `full` also re-hashes every file."""
    meta = read_meta(set_dir)
    if meta.get("format_version") != FORMAT_VERSION:
        raise DatasetError(f"{set_dir}: format_version {meta.get('format_version')}, expected {FORMAT_VERSION}")
    if params is not None and meta.get("params") != asdict(params):
        raise DatasetError(f"{set_dir}: made with other parameters {meta.get('params')}")
    try:
        with open(os.path.join(set_dir, "SHA256SUMS"), "rb") as f:
            sums = f.read()
    except OSError as e:
        raise DatasetError(f"{set_dir}/SHA256SUMS: unreadable: {e}") from None
    if hashlib.sha256(sums).hexdigest() != meta.get("sha256sums"):
        raise DatasetError(f"{set_dir}/SHA256SUMS does not match the checksum in dataset.json")
    listed = [line.split("  ", 1) for line in sums.decode().splitlines()]
    if len(listed) != meta.get("files"):
        raise DatasetError(f"{set_dir}: SHA256SUMS lists {len(listed)} files, dataset.json says {meta.get('files')}")
    total = 0
    for _, rel in listed:
        try:
            total += os.stat(os.path.join(set_dir, rel)).st_size
        except OSError:
            raise DatasetError(f"{set_dir}: {rel} is missing") from None
    if total != meta.get("bytes"):
        raise DatasetError(f"{set_dir}: files hold {total} bytes, dataset.json says {meta.get('bytes')}")
    if full:
        paths = [os.path.join(set_dir, rel) for _, rel in listed]
        workers = max(1, min(workers or os.cpu_count() or 1, len(paths) // CHUNK + 1))
        if workers == 1:
            _compare(set_dir, listed, map(_hash_file, paths))
        else:
            with multiprocessing.get_context("spawn").Pool(workers) as pool:
                _compare(set_dir, listed, pool.imap(_hash_file, paths, chunksize=256))
    return meta


def _compare(set_dir, listed, hashes):
    for (sha, rel), got in zip(listed, hashes):
        if sha != got:
            raise DatasetError(f"{set_dir}: {rel} does not match its checksum")


@contextlib.contextmanager
def _locked(path, log):
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another process to release {path}")
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure(cache_dir, params, workers=None, log=_stderr):
    """Returns the directory of the set under `cache_dir`, generating it first unless a
    verified copy is there. Safe when several processes ask at once (a lock file)."""
    os.makedirs(cache_dir, exist_ok=True)
    final = os.path.join(cache_dir, params.dirname)
    with _locked(os.path.join(cache_dir, f".{params.dirname}.lock"), log):
        if os.path.exists(final):
            read_meta(final)  # refuses to touch a directory that is not a generated set
            try:
                verify(final, params)
                return final
            except DatasetError as e:
                log(f"{e}; generating the set again")
                shutil.rmtree(final)
        for stale in glob.glob(os.path.join(cache_dir, f".{params.dirname}.tmp-*")):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = os.path.join(cache_dir, f".{params.dirname}.tmp-{os.getpid()}")
        try:
            generate(tmp, params, workers, log)
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


# --- command line ----------------------------------------------------------------------

def main(argv=None):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from jobspec import DATASETS

    parser = argparse.ArgumentParser(description="Generate or verify a deterministic stand-in image set.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write a set under a cache directory (reused if it verifies)")
    g.add_argument("--out", required=True, help="cache directory")
    g.add_argument("--name", required=True, help=f"dataset name; {', '.join(DATASETS)} give the defaults below")
    g.add_argument("--image-size", type=int, help="image side in pixels, 0 for variable")
    g.add_argument("--format", choices=tuple(EXTENSIONS))
    g.add_argument("--train", type=int, help="training images (before --fraction)")
    g.add_argument("--val", type=int, help="validation images (before --fraction)")
    g.add_argument("--classes", type=int)
    g.add_argument("--fraction", type=float, default=1.0, help="fraction of the counts (default 1)")
    g.add_argument("--seed", type=int, default=42)
    g.add_argument("--workers", type=int, help="processes (default: all cores)")
    v = sub.add_parser("verify", help="check a set")
    v.add_argument("set_dir")
    v.add_argument("--full", action="store_true", help="re-hash every file")
    args = parser.parse_args(argv)

    try:
        if args.command == "verify":
            meta = verify(args.set_dir, full=args.full)
            print(f"{args.set_dir}: {meta['files']} files, {meta['bytes']} bytes ok")
            return 0
        known = DATASETS.get(args.name, {})
        values = {"image_size": args.image_size, "format": args.format, "train": args.train,
                  "val": args.val, "classes": args.classes}
        defaults = {"image_size": known.get("image_size"), "format": known.get("format"),
                    "train": known.get("train_count"), "val": known.get("val_count"),
                    "classes": known.get("classes")}
        for key, value in values.items():
            if value is None:
                values[key] = defaults[key]
            if values[key] is None:
                parser.error(f"--{key.replace('_', '-')} is needed for a dataset other than {', '.join(DATASETS)}")
        if not 0 < args.fraction <= 1:
            parser.error("--fraction must be in (0, 1]")
        train = max(1, round(values["train"] * args.fraction))
        params = SetParams(name=args.name, image_size=values["image_size"], format=values["format"],
                           train=train, val=round(values["val"] * args.fraction),
                           classes=min(values["classes"], train), seed=args.seed)
        print(ensure(args.out, params, args.workers))
        return 0
    except (DatasetError, OSError) as e:
        print(f"datagen: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
