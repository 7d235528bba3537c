#!/usr/bin/env python3
"""Deterministic stand-in image datasets: the real dataset's image size, file format and
count, with made-up pictures, so that a job decodes and augments files as it would with
the real data.

A set is written once under a cache directory, in the ImageFolder layout
(`train/c0007/0000042.png`), with `SHA256SUMS` (one line per file, sha256sum format) and
`dataset.json` (its parameters, file count, bytes, the sha256 of SHA256SUMS, the style of
its pictures and a summary of file and picture sizes). The same parameters give the same
bytes with the same numpy and Pillow (their versions are recorded in dataset.json).
Pictures are made up like photographs (see "pictures" below) and as large as the real
dataset's files: CIFAR-10-like 32 px PNG of about 2.4 KB, 64 px PNG of about 9 KB like
downsampled ImageNet, and ImageNet-like JPEG of about 110 KB on average at sizes like
ImageNet's (mostly 500 x 375). Each class has its own colour layout, so a model can learn
the labels. Image i of a split has class i mod classes.

    python3 workloads/datagen.py generate --out CACHE --name cifar10 [--fraction 0.1] [--seed 42]
    python3 workloads/datagen.py verify CACHE/cifar10-32px-png-t5000-v1000-c10-s42 [--full]

Needs numpy and Pillow. What decoding a set costs on a host is `loadcost.py`'s.
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

FORMAT_VERSION = 2     # 2: photograph-like pictures, ImageNet-like sizes; 1: colour fields with noise
EXTENSIONS = {"png": ".png", "jpeg": ".jpg"}
SPLITS = ("train", "val")
CHUNK = 1000          # images per task of a worker
VARIABLE_SIDES = (64, 1600)  # bounds of either side of variable-size (ImageNet-like) pictures


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
#
# A picture is built like a photograph is made up: a smooth colour layout (the class's own,
# so that a model can learn the labels), a few flat-coloured shapes with sharp edges, a
# luminance texture with the 1/f amplitude spectrum of natural images plus a little white
# sensor noise, stronger in some areas than in others, and two smoother chroma textures
# (colour varies more slowly than brightness), mixed into RGB as YCbCr is. The strength of
# the texture, drawn per picture from a log-normal spread, sets how well the picture
# compresses; each style's strength is chosen so that the files come out about as large as
# the real dataset's.

@dataclass(frozen=True)
class Style:
    """How the pictures of a set look and are stored."""
    texture: float            # std of the luminance texture, in grey levels
    white: float              # std of the white noise, as a share of the texture's
    chroma: float             # std of each chroma texture, as a share of the texture's
    spread: float             # log-normal spread (sigma) of the texture per picture
    shapes: int               # flat-coloured shapes per picture: shapes // 2 to shapes
    quality: tuple = (90, 90)  # JPEG quality, drawn per picture from this range (inclusive)


STYLES = {
    # 32 px PNG, as large as CIFAR-10's PNG files (2-3 KB; these about 2.4 KB).
    "cifar10-like": Style(texture=8.0, white=0.10, chroma=0.35, spread=0.5, shapes=3),
    # 64 px PNG, like downsampled ImageNet's images stored as PNG (these about 9 KB).
    "imagenet64-like": Style(texture=9.0, white=0.10, chroma=0.35, spread=0.5, shapes=4),
    # JPEG photographs, as large as ImageNet's (about 110 KB at about 500 x 375).
    "photo": Style(texture=25.0, white=0.10, chroma=0.35, spread=0.35, shapes=8, quality=(80, 95)),
}

# ImageNet-like picture sizes: the longer side is 500 px for most pictures (the size the
# pictures were collected at), smaller or larger for the rest; aspect ratios 4:3 first,
# then 3:2, 1:1, 5:4, 16:9 and any between 1 and 2.2; one in five upright.
LONG_SIDE = ((0.75, 500, 500), (0.18, 120, 499), (0.07, 501, 1600))  # (share, low, high), log-uniform
ASPECTS = ((0.55, 4 / 3), (0.15, 3 / 2), (0.08, 1.0), (0.05, 5 / 4), (0.04, 16 / 9), (0.13, None))
UPRIGHT = 0.2


def style_for(params):
    """The style name of a set: `photo` for JPEG, by image side for PNG."""
    if params.format == "jpeg":
        return "photo"
    return "cifar10-like" if 0 < params.image_size <= 32 else "imagenet64-like"


def _pick(rng, table):
    u, total = rng.random(), 0.0
    for row in table:
        total += row[0]
        if u < total:
            return row
    return table[-1]


def picture_size(params, rng):
    """(height, width) of a picture: the set's side, or ImageNet-like for variable sizes."""
    if params.image_size:
        return params.image_size, params.image_size
    import math
    _, low, high = _pick(rng, LONG_SIDE)
    long_side = low if low == high else math.exp(rng.uniform(math.log(low), math.log(high)))
    ratio = _pick(rng, ASPECTS)[1] or math.exp(rng.uniform(0.0, math.log(2.2)))
    lo, hi = VARIABLE_SIDES
    long_side = min(hi, max(lo, round(long_side)))
    short_side = min(hi, max(lo, round(long_side / ratio)))
    return (long_side, short_side) if rng.random() < UPRIGHT else (short_side, long_side)


_FILTERS = {}


def _spectrum_filter(h, w, white):
    """Amplitudes of the half spectrum (h, w // 2 + 1) of a field with a 1/f amplitude
    spectrum of unit std plus white noise of std `white` (cached per size)."""
    import numpy as np
    key = (h, w, white)
    a = _FILTERS.get(key)
    if a is None:
        fy = np.fft.fftfreq(h).astype(np.float32)[:, None]
        fx = np.fft.rfftfreq(w).astype(np.float32)[None, :]
        f = np.sqrt(fx * fx + fy * fy)
        f[0, 0] = 1.0
        a = 1.0 / f
        a[0, 0] = 0.0
        a /= np.sqrt(2 * float((a * a).sum()))
        a += np.float32(white / np.sqrt(h * w))
        a[0, 0] = 0.0
        if len(_FILTERS) > 512:
            _FILTERS.clear()
        _FILTERS[key] = a
    return a


def _field(rng, h, w, white=0.0):
    """A random field (h, w, float32) with a 1/f amplitude spectrum, std about 1."""
    import numpy as np
    a = _spectrum_filter(h, w, white)
    spectrum = rng.standard_normal(a.shape + (2,), dtype=np.float32).view(np.complex64)[..., 0]
    spectrum *= a
    return np.fft.irfft2(spectrum, s=(h, w), norm="forward").astype(np.float32, copy=False)


def _smooth_field(rng, h, w, scale=4):
    """A 1/f field made at 1/scale of the size and enlarged: little fine detail."""
    import numpy as np
    from PIL import Image
    low = _field(rng, max(2, -(-h // scale)), max(2, -(-w // scale)))
    return np.array(Image.fromarray(low, "F").resize((w, h), Image.BILINEAR))


def picture(params, split, index):
    """The pixels (h, w, 3, uint8) of image `index` of `split`: a function of the
    parameters alone."""
    import numpy as np
    from PIL import Image, ImageDraw
    style = STYLES[style_for(params)]
    label = index % params.classes
    rng = np.random.default_rng([params.seed, SPLITS.index(split), index])
    class_rng = np.random.default_rng([params.seed, 1 << 20, label])
    class_grid = class_rng.uniform(0, 255, (6, 6, 3))
    palette = class_rng.uniform(20, 235, (8, 3))
    h, w = picture_size(params, rng)
    grid = 0.6 * class_grid + 0.4 * rng.uniform(0, 255, (6, 6, 3))
    grey = grid.mean(axis=2, keepdims=True)
    grid = (grey + 0.6 * (grid - grey)).astype(np.uint8)  # photographs are seldom saturated
    layout = Image.fromarray(grid, "RGB").resize((w, h), Image.BILINEAR)
    draw = ImageDraw.Draw(layout)
    for _ in range(int(rng.integers(max(1, style.shapes // 2), style.shapes + 1))):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = rng.uniform(0.05, 0.4) * w, rng.uniform(0.05, 0.4) * h
        colour = 0.5 * palette[int(rng.integers(0, len(palette)))] + 0.5 * rng.uniform(0, 255, 3)
        colour = tuple(int(c) for c in colour)
        if rng.random() < 0.5:
            draw.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=colour)
        else:
            angles = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(3, 7))))
            draw.polygon([(cx + rx * np.cos(t), cy + ry * np.sin(t)) for t in angles], fill=colour)
    strength = np.float32(style.texture * float(np.exp(rng.normal(0.0, style.spread))))
    luma = _field(rng, h, w, style.white)
    luma *= strength
    # Detail varies over the picture: smooth areas (sky, walls) beside textured ones.
    detail = _smooth_field(rng, h, w, scale=8)
    detail *= np.float32(0.5)
    luma *= np.exp(detail, out=detail)
    cb = _smooth_field(rng, h, w)
    cb *= np.float32(style.chroma) * strength
    cr = _smooth_field(rng, h, w)
    cr *= np.float32(style.chroma) * strength
    base = np.asarray(layout, dtype=np.float32)
    out = np.empty((h, w, 3), np.uint8)
    for c, (kb, kr) in enumerate(((0.0, 1.402), (-0.344, -0.714), (1.772, 0.0))):  # YCbCr to RGB
        plane = base[..., c] + luma
        if kb:
            plane += np.float32(kb) * cb
        if kr:
            plane += np.float32(kr) * cr
        np.clip(plane, 0, 255, out=plane)
        out[..., c] = plane
    return out


def jpeg_quality(params, split, index):
    import numpy as np
    low, high = STYLES[style_for(params)].quality
    rng = np.random.default_rng([params.seed, SPLITS.index(split), index, 1])
    return int(rng.integers(low, high + 1))


def encode(params, pixels, quality=None):
    from PIL import Image
    buf = io.BytesIO()
    image = Image.fromarray(pixels, "RGB")
    if params.format == "png":
        image.save(buf, format="PNG", compress_level=6)
    else:
        image.save(buf, format="JPEG", quality=quality or STYLES[style_for(params)].quality[1])
    return buf.getvalue()


def image_file(params, split, index):
    """(the file's bytes, (width, height)) of image `index` of `split`."""
    pixels = picture(params, split, index)
    quality = jpeg_quality(params, split, index) if params.format == "jpeg" else None
    return encode(params, pixels, quality), (pixels.shape[1], pixels.shape[0])


def _write_chunk(task):
    """Worker: writes images [start, stop) of a split under root; returns
    [(relpath, sha256 hex, bytes, width, height)]."""
    root, params, split, start, stop = task
    out = []
    for index in range(start, stop):
        rel = params.relpath(split, index)
        data, (width, height) = image_file(params, split, index)
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        out.append((rel, hashlib.sha256(data).hexdigest(), len(data), width, height))
    return out


# --- writing and checking sets ----------------------------------------------------------

def _versions():
    import numpy
    import PIL
    return {"python": platform.python_version(), "numpy": numpy.__version__, "pillow": PIL.__version__}


def _estimate_bytes(params):
    sample = min(16, params.train)
    size = sum(len(image_file(params, "train", i)[0]) for i in range(sample)) / sample
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
    sums = "".join(f"{e[1]}  {e[0]}\n" for e in entries).encode()
    with open(os.path.join(root, "SHA256SUMS"), "wb") as f:
        f.write(sums)
    style = style_for(params)
    meta = {"format_version": FORMAT_VERSION, "params": asdict(params), "files": len(entries),
            "bytes": sum(e[2] for e in entries),
            "sha256sums": hashlib.sha256(sums).hexdigest(), "generator": _versions(),
            "style": {"name": style, **asdict(STYLES[style])},
            "summary": {split: summarize([e for e in entries if e[0].startswith(split + "/")])
                        for split in SPLITS if params.count(split)}}
    with open(os.path.join(root, "dataset.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return meta


def _quantile(sorted_values, q):
    """The q-quantile of sorted values (linear between the nearest ranks)."""
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(entries):
    """File sizes and picture sizes of [(relpath, sha256, bytes, width, height)]: what
    dataset.json records under `summary`, to compare with the real dataset's."""
    sizes = sorted(e[2] for e in entries)
    widths = sorted(e[3] for e in entries)
    heights = sorted(e[4] for e in entries)
    pixels = sorted(e[3] * e[4] for e in entries)
    n = len(entries)
    return {
        "files": n,
        "bytes": {"mean": round(sum(sizes) / n, 1), "median": _quantile(sizes, 0.5),
                  "p5": _quantile(sizes, 0.05), "p95": _quantile(sizes, 0.95),
                  "min": sizes[0], "max": sizes[-1]},
        "width": {"median": _quantile(widths, 0.5), "min": widths[0], "max": widths[-1]},
        "height": {"median": _quantile(heights, 0.5), "min": heights[0], "max": heights[-1]},
        "pixels": {"mean": round(sum(pixels) / n, 1), "median": _quantile(pixels, 0.5)},
        "landscape_4_3": round(sum(1 for e in entries if 3 * e[3] == 4 * e[4]) / n, 4),
        "upright": round(sum(1 for e in entries if e[4] > e[3]) / n, 4),
    }


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
