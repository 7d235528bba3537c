#!/usr/bin/env python3
"""Writes the seed inputs of fuzz/corpus/ from the repository's own files: the shipped
specs, GPU tables, artifact and broken-spec corpus, and files of the shipped campaigns
data/h200-quick and data/sim-smoke (manifests cut to their first lines, telemetry cut to
its first rows, so the seeds stay small). A seed named ok-* is valid: the corpus replay
tests (crates/trace/tests/fuzz_corpus.rs, crates/spec/tests/fuzz_corpus.rs) require its
reader to accept it. Run from the repository root: python3 fuzz/seed.py"""

import gzip
import re
import pathlib

ROOT = pathlib.Path(".")
CORPUS = ROOT / "fuzz" / "corpus"
H200 = ROOT / "data" / "h200-quick" / "runs"
SIM = ROOT / "data" / "sim-smoke" / "runs"

RUNS = {
    "h200-x1-exclusive": H200 / "e33-resnet152-imagenet-x1-exclusive@syn.r1",
    "h200-x2-mps": H200 / "e33-resnet152-imagenet-x2-mps@syn.r1",
    "h200-x7-naive-gen": H200 / "e33-resnet26-cifar10-x7-naive@gen.r1",
    "h200-x7-mps-failed": H200 / "e33-resnet152-imagenet-x7-mps@syn.r1",
    "h200-mig-skipped": H200 / "e33-resnet152-imagenet-x1-mig4g@syn.r1",
    "h200-mig-infeasible": H200 / "e37-L+2M-mig@syn.r1",
    "sim-x2-mig": SIM / "e33-resnet26-cifar10-x2-mig3g@syn.r1",
    "sim-x3-mpslim-gen": SIM / "e33-resnet26-cifar10-x3-mpslim2g@syn.r1",
    "sim-mix-naive": SIM / "e37-L+M+3S-naive@syn.r1",
}


def put(target, name, data):
    # The shipped traces name the GPU host's checkout (an absolute path before `data/`);
    # the corpus names a neutral one.
    data = re.sub(rb'(?<=")/[^"\s]*?/(?=data/)', b"/srv/colloc/", data)
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def head_gz(path, rows):
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    # mtime=0: the same bytes on every run.
    return gzip.compress(b"\n".join(lines[: rows + 1]) + b"\n", mtime=0)


def main():
    # spec: one file resolved alone; the shipped files together make a valid one.
    exp = ROOT / "experiments"
    whole = b"".join((exp / f).read_bytes() for f in ["catalog.yaml", "protocols.yaml", "exp33.yaml"])
    put("spec", "ok-catalog-protocols-exp33.yaml", whole)
    for f in sorted(exp.glob("*.yaml")):
        put("spec", "seed-" + f.name, f.read_bytes())
    put("spec", "seed-gpu-h200-141gb.yaml", (exp / "gpus" / "h200-141gb.yaml").read_bytes())
    put("spec", "seed-artifact.yaml", (ROOT / "artifact.yaml").read_bytes())
    for f in sorted((ROOT / "crates" / "spec" / "tests" / "broken").glob("*.yaml")):
        put("spec", "seed-broken-" + f.name, f.read_bytes())

    for campaign in ["h200-quick", "sim-smoke"]:
        lines = (ROOT / "data" / campaign / "SHA256SUMS").read_bytes().split(b"\n")
        put("sha256sums", f"ok-{campaign}", b"\n".join(lines[:30]) + b"\n")

    for name, run in RUNS.items():
        put("meta_json", f"ok-{name}.json", (run / "meta.json").read_bytes())
        if (run / "job-0.json").exists():
            put("job_json", f"ok-{name}.json", (run / "job-0.json").read_bytes())
        if (run / "job-0.events.jsonl").exists():
            put("events_jsonl", f"ok-{name}.jsonl", (run / "job-0.events.jsonl").read_bytes())
        for file, target in [("telemetry.csv.gz", "telemetry_csv_gz"), ("processes.csv.gz", "processes_csv_gz")]:
            if (run / file).exists():
                put(target, f"ok-{name}-first-rows.csv.gz", head_gz(run / file, 12))
    # One whole telemetry file each, as the runner wrote it.
    for file, target in [("telemetry.csv.gz", "telemetry_csv_gz"), ("processes.csv.gz", "processes_csv_gz")]:
        put(target, "ok-h200-x1-exclusive-whole.csv.gz", (RUNS["h200-x1-exclusive"] / file).read_bytes())


if __name__ == "__main__":
    main()
