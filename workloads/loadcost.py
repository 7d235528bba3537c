#!/usr/bin/env python3
"""What decoding a generated image set costs on this host, as train.py's training loader
does it: per image on one core (open and decode, then the training transform) on the CUDA
and the CPU path, and the loader's images per second with its workers. Written to
decode-cost.json beside the set's dataset.json (host-dependent, so not in its SHA256SUMS).

    python3 workloads/loadcost.py CACHE/cifar10-32px-png-t5000-v1000-c10-s42 [--workers 4]

Needs PyTorch, torchvision and timm beside numpy and Pillow. It reads the set with
datagen.py and builds the loader with train.py; neither imports it.
"""

import argparse
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import datagen  # noqa: E402
import jobspec  # noqa: E402
import train  # noqa: E402

COST_FILE = "decode-cost.json"   # beside dataset.json; host-dependent, so not in SHA256SUMS
COST_IMAGES = {"png": 1500, "jpeg": 300}


def _host():
    cpu = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    return {"cpu_model": cpu, "cpu_cores": os.cpu_count(), "machine": platform.machine()}


def _training_loader(set_dir, model, workers, batch_size, cuda_path):
    """The training loader train.py builds for this set (its Trainer.loader), on the CPU.
    `cuda_path`: as on a CUDA device, where the workers hand uint8 arrays to the GPU, which
    normalises them (timm's prefetcher); else as on the CPU (ToTensor and normalisation in
    the workers)."""
    import timm
    import timm.data
    import torch
    job, opts = jobspec.parse_args(["--model", model, "--batch-size", str(batch_size),
                                    "--workers", str(workers), "--device", "cpu"])
    trainer = train.Trainer(job, opts, None, 0.0)
    net = timm.create_model(model, pretrained=False, num_classes=job.training.num_classes)
    cfg = timm.data.resolve_data_config({}, model=net)
    trainer.shape = tuple(cfg["input_size"][1:])
    trainer.cuda, trainer.device = cuda_path, torch.device("cpu")
    samples = train.scan_split(os.path.join(set_dir, "train"))[0]
    loader = trainer.loader(timm, cfg, samples, True)
    return loader, samples


def measure_cost(set_dir, images=None, workers=4, batches=30, batch_size=128, model="resnet50",
                 log=datagen._stderr):
    """Measures what decoding the set costs on this host, as train.py's training loader does
    it, and writes it to COST_FILE in the set's directory; returns it. One core: open and
    decode (PIL, to RGB), then the training transform (RandomResizedCrop to the model's
    input, flip, ColorJitter 0.4; then ToTensor and normalisation on the CPU path, a uint8
    array on the CUDA path), image after image in this process with one torch thread, over
    an evenly spaced sample of `images` training images read once before (page cache). The
    loader: `workers` worker processes on the CUDA path, images per second over `batches`
    batches after the first. Needs PyTorch, torchvision and timm."""
    import random
    import time
    import torch
    import timm
    import torchvision
    from PIL import Image
    meta = datagen.verify(set_dir)
    fmt = meta["params"]["format"]
    torch.set_num_threads(1)
    random.seed(0)
    torch.manual_seed(0)
    result = {"format_version": 1, "set": os.path.basename(os.path.normpath(set_dir)),
              "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "host": _host(),
              "software": {**datagen._versions(), "torch": torch.__version__, "torchvision": torchvision.__version__,
                           "timm": timm.__version__},
              "model": model, "single_core": {}, "loader": None}
    for path_name, cuda_path in (("cuda_path", True), ("cpu_path", False)):
        loader, samples = _training_loader(set_dir, model, workers, batch_size, cuda_path)
        transform = loader.dataset.transform
        n = min(len(samples), images or COST_IMAGES.get(fmt, 500))
        chosen = [samples[i * len(samples) // n][0] for i in range(n)]
        for path in chosen:  # into the page cache
            with open(path, "rb") as f:
                f.read()
        decode, total = [], []
        for path in chosen:
            t0 = time.perf_counter()
            with open(path, "rb") as f:
                image = Image.open(f).convert("RGB")
            t1 = time.perf_counter()
            transform(image)
            t2 = time.perf_counter()
            decode.append(t1 - t0)
            total.append(t2 - t0)
        total.sort()
        result["single_core"][path_name] = {
            "images": n, "decode_ms": round(1e3 * sum(decode) / n, 4),
            "transform_ms": round(1e3 * (sum(total) - sum(decode)) / n, 4),
            "total_ms": round(1e3 * sum(total) / n, 4), "total_ms_median": round(1e3 * datagen._quantile(total, 0.5), 4),
            "total_ms_p95": round(1e3 * datagen._quantile(total, 0.95), 4),
            "images_per_second": round(n / sum(total), 1)}
        log(f"{result['set']}: {path_name}: {result['single_core'][path_name]['total_ms']:.3f} ms per image on one core")
        if cuda_path:
            data_loader = getattr(loader, "loader", loader)  # under timm's prefetcher: the workers' output
            if len(data_loader) == 0:
                raise datagen.DatasetError(f"{set_dir}: fewer training images than one batch of {batch_size}")
            seen, t0, it = 0, None, iter(data_loader)
            while seen < batches:
                batch = next(it, None)
                if batch is None:
                    it = iter(data_loader)  # a new epoch (persistent workers)
                    continue
                if t0 is None:
                    t0 = time.perf_counter()  # the first batch pays the workers' start
                    continue
                seen += 1
            seconds = time.perf_counter() - t0
            result["loader"] = {"path": path_name, "workers": workers, "batch_size": batch_size, "batches": batches,
                                "seconds": round(seconds, 3),
                                "images_per_second": round(batches * batch_size / seconds, 1)}
            log(f"{result['set']}: {workers} workers: {result['loader']['images_per_second']:.0f} images/s")
            del it, data_loader
        del loader
    with open(os.path.join(set_dir, COST_FILE), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=f"Measure the decode cost of a generated set on this host "
                                                 f"(writes {COST_FILE}; needs PyTorch, torchvision and timm).")
    parser.add_argument("set_dir")
    parser.add_argument("--images", type=int, help="images timed on one core (default: 1500 PNG, 300 JPEG)")
    parser.add_argument("--workers", type=int, default=4, help="loader workers (default: the paper's 4)")
    parser.add_argument("--batches", type=int, default=30, help="batches timed through the loader (default 30)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--model", default="resnet50", help="model whose input size and mean the transform uses")
    args = parser.parse_args(argv)
    try:
        result = measure_cost(args.set_dir, args.images, args.workers, args.batches, args.batch_size, args.model)
    except ImportError as e:
        print(f"loadcost: needs PyTorch, torchvision and timm: {e}", file=sys.stderr)
        return 1
    except datagen.DatasetError as e:
        print(f"loadcost: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
