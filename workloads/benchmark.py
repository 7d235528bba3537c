#!/usr/bin/env python3
"""Single-job benchmark of the training program: runs train.py once per (model, data
source), alone on the GPU, through the real protocol (ready, release on stdin, window),
validates each event log and prints a Markdown table of images/s, set-up and warm-up time.

    python3 workloads/benchmark.py --models resnet26,resnet50,resnet152 \\
        --data synthetic,generated --dataset cifar10 --window-seconds 20 --out /tmp/bench

`--protocol paper --epochs 1` measures whole epochs instead of a window. Standard library
only (train.py brings PyTorch).
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def read_events(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run_one(args, model, data, out):
    name = f"{model}-{data}-{args.dataset}-{args.protocol}"
    events = os.path.join(out, name + ".events.jsonl")
    if os.path.exists(events):
        os.remove(events)
    cmd = [sys.executable, os.path.join(HERE, "train.py"), "--model", model, "--data", data,
           "--dataset", args.dataset, "--batch-size", str(args.batch_size), "--protocol", args.protocol,
           "--events", events, "--precision", args.precision]
    if data != "synthetic":
        cmd += ["--data-path", os.path.join(args.cache, args.dataset), "--fraction", str(args.fraction)]
    if args.protocol == "quick":
        cmd += ["--window-seconds", str(args.window_seconds), "--warmup-steps", str(args.warmup_steps)]
    else:
        cmd += ["--epochs", str(args.epochs)]
    if args.workers is not None:
        cmd += ["--workers", str(args.workers)]
    started = time.monotonic()
    with open(os.path.join(out, name + ".stderr.txt"), "w") as err:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=err, text=True)
        while p.poll() is None and not any(e["event"] == "ready" for e in read_events(events)):
            time.sleep(0.05)
        if p.poll() is None:
            p.stdin.write("release\n")
            p.stdin.flush()
        p.stdin.close()
        code = p.wait()
    ev = read_events(events)
    # Validated from the output folder, so the record names the log without the host's path.
    check = subprocess.run([sys.executable, os.path.join(HERE, "validate_events.py"), os.path.basename(events)],
                           capture_output=True, text=True, cwd=out)
    ready = next((e for e in ev if e["event"] == "ready"), {})
    samples = [e for e in ev if e["event"] == "sample"]
    images = sum(e["images"] for e in samples)
    seconds = sum(e["seconds"] for e in samples)
    wait = sum(e["data_wait_seconds"] for e in samples)
    epochs = [e for e in ev if e["event"] == "epoch_end"]
    versions = next((e for e in ev if e["event"] == "versions"), {})
    return {
        "model": model, "data": data, "dataset": args.dataset, "protocol": args.protocol,
        "precision": args.precision, "exit": code, "valid": check.returncode == 0,
        "validation": (check.stdout + check.stderr).strip(),
        "images_per_second": images / seconds if seconds else None,
        "data_wait_share": wait / seconds if seconds else None,
        "setup_seconds": ready.get("setup_seconds"), "warmup_seconds": ready.get("warmup_seconds"),
        "epoch_train_seconds": [e["train_seconds"] for e in epochs],
        "epoch_val_seconds": [e["val_seconds"] for e in epochs],
        "wall_seconds": time.monotonic() - started, "versions": versions,
    }


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="resnet26,resnet50,resnet152")
    p.add_argument("--data", default="synthetic,generated", help="comma-separated data sources")
    p.add_argument("--dataset", default="cifar10")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--protocol", default="quick", choices=("quick", "paper"))
    p.add_argument("--window-seconds", type=float, default=20)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--fraction", type=float, default=0.05, help="fraction of the dataset generated")
    p.add_argument("--workers", type=int)
    p.add_argument("--cache", default=os.path.join(os.getcwd(), ".cache", "datasets"))
    p.add_argument("--out", required=True, help="folder for event logs and results.json")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = []
    for model in args.models.split(","):
        for data in args.data.split(","):
            r = run_one(args, model, data, args.out)
            results.append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "versions"}), file=sys.stderr, flush=True)
    with open(os.path.join(args.out, f"results-{args.dataset}-{args.protocol}.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("| model | data | dataset | protocol | precision | images/s | data wait | set-up s | warm-up s | epoch train s | log valid |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        ep = ", ".join(f"{s:.1f}" for s in r["epoch_train_seconds"]) or "—"
        print(f"| {r['model']} | {r['data']} | {r['dataset']} | {r['protocol']} | {r['precision']} | "
              f"{fmt(r['images_per_second'], '.0f')} | {fmt(r['data_wait_share'], '.0%')} | "
              f"{fmt(r['setup_seconds'], '.1f')} | {fmt(r['warmup_seconds'], '.1f')} | {ep} | "
              f"{'yes' if r['valid'] else 'NO (exit ' + str(r['exit']) + ')'} |")
    if results and results[0]["versions"]:
        v = results[0]["versions"]
        print(f"\n{v.get('device')}; torch {v.get('torch')}, timm {v.get('timm')}, CUDA {v.get('cuda')}, cuDNN {v.get('cudnn')}")
    return 0 if all(r["valid"] and r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
