"""Shared helpers of the workload tests."""

import copy
import importlib.util
import json
import os
import tempfile

from workloads.tests import REPO, WORKLOADS  # noqa: F401  (re-exported)

# A job file as the runner writes it (crates/trace/src/jobfile.rs).
JOB = {
    "protocol_version": 2, "run_id": "e33-resnet26-x2-naive.r1", "workload_id": "e33-resnet26-x2-naive",
    "job": 1, "model": "resnet26", "batch_size": 128,
    "data": {"source": "generated", "name": "cifar10", "path": "/tmp/cache", "image_size": 32,
             "train_count": 50000, "val_count": 10000, "fraction": 0.1, "format": "png"},
    "training": {"lr": 0.05, "momentum": 0.9, "weight_decay": 2e-5, "label_smoothing": 0.1,
                 "schedule": "cosine", "precision": "fp32", "channels_last": False, "workers": 4,
                 "input_size": None, "num_classes": 1000, "color_jitter": 0.4,
                 "validate_every_epoch": True, "seed": 42},
    "protocol": {"kind": "quick", "warmup_steps": 10, "window_seconds": 30.0, "sample_every": 50,
                 "min_iterations": 20, "precision_target": None, "max_window_seconds": None},
    "events_path": "runs/x/job-1.events.jsonl",
}


def job(**changes):
    """A copy of JOB; `changes` maps paths such as `training__lr` to values (DELETE removes)."""
    out = copy.deepcopy(JOB)
    for path, value in changes.items():
        *parents, key = path.split("__")
        node = out
        for p in parents:
            node = node[p]
        if value is DELETE:
            del node[key]
        else:
            node[key] = value
    return out


DELETE = object()


def write_json(directory, name, obj):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    return path


def have(*modules):
    return all(importlib.util.find_spec(m) is not None for m in modules)


def tempdir(test):
    d = tempfile.TemporaryDirectory()
    test.addCleanup(d.cleanup)
    return d.name
