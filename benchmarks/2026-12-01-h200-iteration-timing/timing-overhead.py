#!/usr/bin/env python3
"""Does timing every training iteration slow training down? One process trains one model
on synthetic data exactly as train.py does (its Trainer builds model, optimizer, loss and
data; its train_step runs each iteration) and alternates measured windows of three kinds:

  none    no per-iteration timing
  events  workloads/itertime.py's CudaRecorder: a CUDA event after every optimizer step,
          read back a few iterations later without waiting
  sync    torch.cuda.synchronize() after every iteration, then the host clock

in rotated order (round r starts at variant r mod 3). Every window starts and ends with a
device synchronisation; its throughput is images / (host seconds between the two). A last
`check` window does both (events and a synchronisation per iteration) to see how far the
events' times lie from the host clock read right after each iteration's synchronisation.

    python3 benchmarks/2026-12-01-h200-iteration-timing/timing-overhead.py \\
        --model resnet26 --dataset cifar10 --rounds 5 --window 8 --out DIR

Writes DIR/<model>-windows.jsonl (one line per window) and DIR/<model>-summary.json and
prints a table. Needs PyTorch, timm and a CUDA device.
"""

import argparse
import io
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "workloads"))

import events  # noqa: E402
import itertime  # noqa: E402
import jobspec  # noqa: E402
import train  # noqa: E402

VARIANTS = ("none", "events", "sync")


def build(model, dataset, batch, precision, device="cuda", input_size=None):
    flags = ["--model", model, "--data", "synthetic", "--dataset", dataset, "--batch-size", str(batch),
             "--precision", precision, "--protocol", "quick", "--no-wait", "--device", device, "--events", "-"]
    if input_size:
        flags += ["--input-size", str(input_size)]
    job, opts = jobspec.parse_args(flags)
    trainer = train.Trainer(job, opts, events.EventWriter(io.StringIO(), 0), time.monotonic())
    trainer.setup()
    return trainer


def window(trainer, variant, seconds):
    """One measured window; returns its record."""
    torch, device, batch = trainer.torch, trainer.device, trainer.job.batch_size
    sync = (lambda: torch.cuda.synchronize(device)) if trainer.cuda else (lambda: None)
    chunks = []
    emit = lambda c: chunks.append(json.dumps(c, separators=(",", ":")))  # noqa: E731  as an event line would
    rec, host_ends = None, None
    if variant in ("events", "check"):
        rec = itertime.recorder(torch, device, on_chunk=emit)  # the CPU fallback off CUDA
    elif variant == "sync":
        rec = itertime.HostRecorder(sync=sync, on_chunk=emit)
    if variant == "check":
        host_ends = []
    sync()
    anchor = rec.anchor() if rec else None
    t0 = time.monotonic()
    steps = 0
    while True:
        xy, _ = trainer.stream.next()
        if xy is None:
            continue  # an epoch of the synthetic source ended, as in train.py's loop
        trainer.train_step(*xy)
        steps += 1
        if rec is not None:
            rec.mark(batch)
        if host_ends is not None:
            sync()
            host_ends.append(time.monotonic())
        if time.monotonic() - t0 >= seconds:
            break
    if rec is not None:
        rec.finish()
    sync()
    t1 = time.monotonic()
    out = {"variant": variant, "steps": steps, "images": steps * batch, "seconds": t1 - t0,
           "images_per_second": steps * batch / (t1 - t0)}
    if rec is not None:
        parsed = [json.loads(c) for c in chunks]
        got_steps, ends, images = itertime.decode(parsed)
        durations = sorted(itertime.durations(parsed))
        assert got_steps == list(range(steps)) and sum(images) == steps * batch, "recorder lost iterations"
        out.update({
            "recorded": len(ends), "chunks": len(chunks), "chunk_bytes": sum(len(c) for c in chunks),
            "anchor_halfwidth_us": 1e6 * rec.anchors[0]["halfwidth"],
            "first_end_after_start_ms": 1e3 * (ends[0] - anchor),
            "last_end_to_window_end_ms": 1e3 * (t1 - ends[-1]),
            "iteration_ms": {"median": 1e3 * statistics.median(durations),
                             "p5": 1e3 * durations[int(0.05 * (len(durations) - 1))],
                             "p95": 1e3 * durations[int(0.95 * (len(durations) - 1))],
                             "max": 1e3 * durations[-1]},
        })
        if isinstance(rec, itertime.CudaRecorder):
            out["reads_waited"] = rec.reads_waited
            rec.anchor()  # after the window: how far the GPU timer drifted from the host clock
            out["drift_us"] = 1e6 * rec.anchors[-1]["drift"]
            out["drift_ppm"] = 1e6 * rec.anchors[-1]["drift"] / (rec.anchors[-1]["mono"] - rec.anchors[0]["mono"])
        if host_ends is not None:
            lag = sorted(h - e for h, e in zip(host_ends, ends))
            out["host_after_sync_minus_event_us"] = {
                "min": 1e6 * lag[0], "median": 1e6 * statistics.median(lag), "max": 1e6 * lag[-1]}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="resnet26")
    p.add_argument("--dataset", default="cifar10", help="sets the synthetic epoch's length only")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--window", type=float, default=8.0, help="seconds per window")
    p.add_argument("--warmup-steps", type=int, default=30)
    p.add_argument("--warmup-window", type=float, default=3.0, help="seconds of each variant before the rounds")
    p.add_argument("--check-window", type=float, default=4.0)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cuda", help="cuda, or cpu for a smoke test of this script")
    p.add_argument("--input-size", type=int, help="input side (default: the model's; small for a smoke test)")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    t_start = time.monotonic()
    trainer = build(args.model, args.dataset, args.batch_size, args.precision, args.device, args.input_size)
    t_built = time.monotonic()
    trainer.warm_up(args.warmup_steps)
    t_warm = time.monotonic()
    device_name = trainer.torch.cuda.get_device_name(trainer.device) if trainer.cuda else "cpu"
    print(f"{args.model}: built in {t_built - t_start:.1f} s, {args.warmup_steps} warm-up steps in "
          f"{t_warm - t_built:.1f} s; device {device_name}", flush=True)
    for v in VARIANTS + ("none",):
        w = window(trainer, v, args.warmup_window)
        print(f"  warm-up window {v}: {w['images_per_second']:.1f} img/s", flush=True)
    records = []
    log_path = os.path.join(args.out, f"{args.model}-windows.jsonl")
    with open(log_path, "w", encoding="utf-8") as log:
        for r in range(args.rounds):
            order = VARIANTS[r % 3:] + VARIANTS[:r % 3]
            for position, v in enumerate(order):
                w = window(trainer, v, args.window)
                w.update(model=args.model, round=r, position=position, mono=time.monotonic())
                records.append(w)
                log.write(json.dumps(w) + "\n")
                log.flush()
                extra = ""
                if "iteration_ms" in w:
                    extra = f"  iteration median {w['iteration_ms']['median']:.3f} ms"
                print(f"  round {r} {v:6s} {w['images_per_second']:8.1f} img/s  {w['steps']} steps{extra}", flush=True)
        check = window(trainer, "check", args.check_window)
        check.update(model=args.model, round=None, position=None, mono=time.monotonic())
        log.write(json.dumps(check) + "\n")
    print(f"  check window: {check['images_per_second']:.1f} img/s; host time after sync minus event time "
          f"(µs): {check.get('host_after_sync_minus_event_us')}", flush=True)

    rates = {v: [w["images_per_second"] for w in records if w["variant"] == v] for v in VARIANTS}
    medians = {v: statistics.median(rates[v]) for v in VARIANTS}
    paired = {v: [] for v in VARIANTS}
    for r in range(args.rounds):
        base = next(w for w in records if w["round"] == r and w["variant"] == "none")["images_per_second"]
        for v in VARIANTS:
            paired[v].append(next(w for w in records if w["round"] == r and w["variant"] == v)["images_per_second"] / base)
    summary = {
        "model": args.model, "batch_size": args.batch_size, "precision": args.precision,
        "channels_last": trainer.job.training.channels_last, "rounds": args.rounds, "window_seconds": args.window,
        "device": device_name, "input_size": list(trainer.shape),
        "torch": trainer.torch.__version__, "cudnn": trainer.torch.backends.cudnn.version(),
        "images_per_second": rates, "median": medians,
        "ratio_of_medians": {v: medians[v] / medians["none"] for v in VARIANTS},
        "paired_ratio": {v: {"median": statistics.median(paired[v]), "min": min(paired[v]), "max": max(paired[v])}
                         for v in VARIANTS},
        "none_spread": (max(rates["none"]) - min(rates["none"])) / medians["none"],
        "events_drift_ppm": [w.get("drift_ppm") for w in records if w["variant"] == "events"],
        "events_reads_waited": [w.get("reads_waited") for w in records if w["variant"] == "events"],
        "iteration_ms_median": {v: statistics.median(w["iteration_ms"]["median"] for w in records
                                                     if w["variant"] == v) for v in ("events", "sync")},
        "check": check, "seconds": time.monotonic() - t_start,
    }
    with open(os.path.join(args.out, f"{args.model}-summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(f"\n| {args.model} b{args.batch_size} | windows (img/s) | median | ratio of medians | paired ratio median (min–max) |")
    print("|---|---|---:|---:|---:|")
    for v in VARIANTS:
        pr = summary["paired_ratio"][v]
        print(f"| {v} | {', '.join(f'{x:.1f}' for x in rates[v])} | {medians[v]:.1f} | "
              f"{summary['ratio_of_medians'][v]:.4f} | {pr['median']:.4f} ({pr['min']:.4f}–{pr['max']:.4f}) |")
    print(f"none windows spread: {100 * summary['none_spread']:.2f}% of their median; "
          f"GPU timer drift against the host clock per events window: "
          f"{', '.join(f'{d:+.2f}' for d in summary['events_drift_ppm'] if d is not None)} ppm", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
