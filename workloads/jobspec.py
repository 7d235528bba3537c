"""The job a training process runs: read from a job file, from command-line flags, or both.

Standard library only, so it can be tested without PyTorch. The job file's format is the
runner's `JobFile` (crates/trace/src/jobfile.rs); PROTOCOL.md describes it. Every problem
is a `JobError` whose message names the file (or `command line`) and the field.
"""

import argparse
import copy
import json
import math
from dataclasses import asdict, dataclass
from typing import Optional

PROTOCOL_VERSION = 2
SOURCES = ("synthetic", "generated", "imagefolder")
FORMATS = ("png", "jpeg")
SCHEDULES = ("cosine", "constant")
PRECISIONS = ("fp32", "amp")
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

# The paper's datasets: stored image side (0: variable), sizes, file format, classes.
DATASETS = {
    "cifar10": {"image_size": 32, "train_count": 50000, "val_count": 10000, "format": "png", "classes": 10},
    "imagenet64": {"image_size": 64, "train_count": 1281167, "val_count": 50000, "format": "png", "classes": 1000},
    "imagenet": {"image_size": 0, "train_count": 1281167, "val_count": 50000, "format": "jpeg", "classes": 1000},
}

# Field kinds: u32, u64, i32, float, str, bool; a trailing `?` allows null.
DATA_FIELDS = {
    "source": "str", "name": "str", "path": "str?", "image_size": "u32", "train_count": "u64",
    "val_count": "u64", "fraction": "float", "format": "str",
}
TRAINING_FIELDS = {
    "lr": "float", "momentum": "float", "weight_decay": "float", "label_smoothing": "float",
    "schedule": "str", "precision": "str", "channels_last": "bool", "workers": "u32",
    "input_size": "u32?", "num_classes": "u32", "color_jitter": "float",
    "validate_every_epoch": "bool", "seed": "u64",
}
PROTOCOL_FIELDS = {
    "paper": {"epochs": "u32", "sample_every": "u32"},
    "quick": {"warmup_steps": "u32", "window_seconds": "float", "sample_every": "u32", "min_iterations": "u32",
              "precision_target": "float?", "max_window_seconds": "float?"},
}
JOB_FIELDS = {
    "protocol_version": "u32", "run_id": "str", "workload_id": "str", "job": "u32", "model": "str",
    "batch_size": "u32", "data": DATA_FIELDS, "training": TRAINING_FIELDS, "protocol": "protocol",
    "events_path": "str",
}
PROTOCOL_DEFAULTS = {
    "paper": {"kind": "paper", "epochs": 5, "sample_every": 50},
    "quick": {"kind": "quick", "warmup_steps": 10, "window_seconds": 60.0, "sample_every": 50,
              "min_iterations": 50, "precision_target": None, "max_window_seconds": None},
}


class JobError(Exception):
    """A job file or command line that cannot be run; the message says where and why."""


@dataclass(frozen=True)
class Data:
    source: str
    name: str
    path: Optional[str]
    image_size: int
    train_count: int
    val_count: int
    fraction: float
    format: str

    @property
    def train_images(self):
        """Training images used: the declared count cut to `fraction` (at least 1)."""
        return max(1, round(self.train_count * self.fraction))

    @property
    def val_images(self):
        return round(self.val_count * self.fraction) if self.val_count else 0

    @property
    def classes(self):
        """Classes of the dataset when it is one of the known ones, else None."""
        return DATASETS.get(self.name, {}).get("classes")


@dataclass(frozen=True)
class Training:
    lr: float
    momentum: float
    weight_decay: float
    label_smoothing: float
    schedule: str
    precision: str
    channels_last: bool
    workers: int
    input_size: Optional[int]
    num_classes: int
    color_jitter: float
    validate_every_epoch: bool
    seed: int


@dataclass(frozen=True)
class Protocol:
    kind: str
    sample_every: int
    epochs: Optional[int] = None
    warmup_steps: Optional[int] = None
    window_seconds: Optional[float] = None
    min_iterations: Optional[int] = None
    # quick: the window is met once the 95% interval of the job's throughput is within
    # ±precision_target (relative), or once max_window_seconds have passed; both or neither.
    precision_target: Optional[float] = None
    max_window_seconds: Optional[float] = None

    def to_dict(self):
        return {"kind": self.kind, **{k: getattr(self, k) for k in PROTOCOL_FIELDS[self.kind]}}


@dataclass(frozen=True)
class Job:
    protocol_version: int
    run_id: str
    workload_id: str
    job: int
    model: str
    batch_size: int
    data: Data
    training: Training
    protocol: Protocol
    events_path: str

    def to_dict(self):
        """The job as a job file (the runner's JobFile) would hold it."""
        out = asdict(self)
        out["protocol"] = self.protocol.to_dict()
        return out


# --- checking -------------------------------------------------------------------------

def _kind_ok(value, kind):
    if value is None:
        return kind.endswith("?")
    kind = kind.rstrip("?")
    if kind in ("u32", "u64", "i32"):
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        low, high = {"u32": (0, U32_MAX), "u64": (0, U64_MAX), "i32": (-2**31, 2**31 - 1)}[kind]
        return low <= value <= high
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, {"str": str, "bool": bool}[kind])


_KIND_WORDS = {"u32": "a non-negative integer", "u64": "a non-negative integer", "i32": "an integer",
               "float": "a finite number", "str": "a string", "bool": "true or false"}


def _check_object(obj, fields, where, prefix):
    """Type-checks `obj` against `fields` (unknown and missing fields are errors)."""
    if not isinstance(obj, dict):
        raise JobError(f"{where}: {prefix or 'the job'}: expected an object, got {json.dumps(obj)}")
    for key in obj:
        if key not in fields:
            raise JobError(f"{where}: {prefix}{key}: unknown field (expected one of {', '.join(fields)})")
    for key, kind in fields.items():
        name = prefix + key
        if key not in obj:
            if isinstance(kind, str) and kind.endswith("?"):
                continue  # as serde does, a missing optional field is null
            raise JobError(f"{where}: {name}: missing field")
        value = obj[key]
        if isinstance(kind, dict):
            _check_object(value, kind, where, name + ".")
        elif kind == "protocol":
            _check_protocol(value, where)
        elif not _kind_ok(value, kind):
            word = _KIND_WORDS[kind.rstrip("?")] + (" or null" if kind.endswith("?") else "")
            raise JobError(f"{where}: {name}: expected {word}, got {json.dumps(value)}")


def _check_protocol(value, where):
    if not isinstance(value, dict):
        raise JobError(f"{where}: protocol: expected an object, got {json.dumps(value)}")
    kind = value.get("kind")
    if kind not in PROTOCOL_FIELDS:
        raise JobError(f"{where}: protocol.kind: expected one of {', '.join(PROTOCOL_FIELDS)}, "
                       f"got {json.dumps(kind)}")
    rest = {k: v for k, v in value.items() if k != "kind"}
    _check_object(rest, PROTOCOL_FIELDS[kind], where, "protocol.")


def _require(ok, where, field, message):
    if not ok:
        raise JobError(f"{where}: {field}: {message}")


def job_from_dict(obj, where):
    """Checks a job (as parsed from JSON) and returns a Job; `where` names its origin."""
    _check_object(obj, JOB_FIELDS, where, "")
    obj = copy.deepcopy(obj)
    obj["data"].setdefault("path", None)
    obj["training"].setdefault("input_size", None)
    data, training = obj["data"], obj["training"]
    proto = obj["protocol"]
    _require(obj["protocol_version"] == PROTOCOL_VERSION, where, "protocol_version",
             f"this program speaks version {PROTOCOL_VERSION}, got {obj['protocol_version']}")
    _require(obj["model"].strip() != "", where, "model", "empty model name")
    _require(obj["batch_size"] >= 1, where, "batch_size", "must be at least 1")
    _require(obj["events_path"] != "", where, "events_path", "empty path")
    _require(data["source"] in SOURCES, where, "data.source",
             f"expected one of {', '.join(SOURCES)}, got {json.dumps(data['source'])}")
    if data["source"] != "synthetic":
        _require(data["path"], where, "data.path", f"required for data source {data['source']}")
    if data["source"] == "generated":
        _require(data["format"] in FORMATS, where, "data.format",
                 f"expected one of {', '.join(FORMATS)}, got {json.dumps(data['format'])}")
        _require(data["train_count"] >= 1, where, "data.train_count", "must be at least 1")
    _require(0 < data["fraction"] <= 1, where, "data.fraction", f"must be in (0, 1], got {data['fraction']}")
    _require(training["schedule"] in SCHEDULES, where, "training.schedule",
             f"expected one of {', '.join(SCHEDULES)}, got {json.dumps(training['schedule'])}")
    _require(training["precision"] in PRECISIONS, where, "training.precision",
             f"expected one of {', '.join(PRECISIONS)}, got {json.dumps(training['precision'])}")
    _require(training["lr"] > 0, where, "training.lr", "must be positive")
    _require(0 <= training["momentum"] < 1, where, "training.momentum", "must be in [0, 1)")
    _require(training["weight_decay"] >= 0, where, "training.weight_decay", "must not be negative")
    _require(0 <= training["label_smoothing"] < 1, where, "training.label_smoothing", "must be in [0, 1)")
    _require(training["color_jitter"] >= 0, where, "training.color_jitter", "must not be negative")
    _require(training["num_classes"] >= 1, where, "training.num_classes", "must be at least 1")
    _require(training["input_size"] is None or training["input_size"] >= 1, where,
             "training.input_size", "must be at least 1, or null for the model's default")
    _require(proto["sample_every"] >= 1, where, "protocol.sample_every", "must be at least 1")
    if proto["kind"] == "paper":
        _require(proto["epochs"] >= 1, where, "protocol.epochs", "must be at least 1")
    else:
        _require(proto["window_seconds"] > 0, where, "protocol.window_seconds", "must be positive")
        target, most = proto.get("precision_target"), proto.get("max_window_seconds")
        given, other = ("precision_target", "max_window_seconds") if most is None else \
            ("max_window_seconds", "precision_target")
        _require((target is None) == (most is None), where, "protocol." + given,
                 f"needs {other} too (precision_target and max_window_seconds come together)")
        if target is not None:
            _require(0 < target <= 0.5, where, "protocol.precision_target", f"must be in (0, 0.5], got {target}")
            _require(most >= proto["window_seconds"], where, "protocol.max_window_seconds",
                     f"must be at least window_seconds ({proto['window_seconds']}), got {most}")
    obj["data"] = Data(**data)
    obj["training"] = Training(**training)
    obj["protocol"] = Protocol(**proto)
    return Job(**obj)


def load_job_file(path):
    """Reads and checks a job file; returns (Job, the parsed JSON)."""
    obj = read_job_json(path)
    return job_from_dict(obj, path), obj


def read_job_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise JobError(f"{path}: cannot read the job file: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise JobError(f"{path}: not valid JSON: {e}") from None


# --- defaults and the command line ----------------------------------------------------

def paper_lr(batch_size):
    """The paper's learning rate: 0.1 × batch / 256."""
    return 0.1 * batch_size / 256


def default_job(model="resnet50", batch_size=128, dataset="imagenet", source="synthetic", protocol="quick"):
    """A job with the paper's settings, as a job-file dict (events go to standard output)."""
    ds = DATASETS.get(dataset, DATASETS["imagenet"])
    return {
        "protocol_version": PROTOCOL_VERSION, "run_id": "manual", "workload_id": "manual", "job": 0,
        "model": model, "batch_size": batch_size,
        "data": {"source": source, "name": dataset, "path": None, "image_size": ds["image_size"],
                 "train_count": ds["train_count"], "val_count": ds["val_count"], "fraction": 1.0,
                 "format": ds["format"]},
        "training": {"lr": paper_lr(batch_size), "momentum": 0.9, "weight_decay": 2e-5,
                     "label_smoothing": 0.1, "schedule": "cosine", "precision": "fp32",
                     "channels_last": False, "workers": 4, "input_size": None, "num_classes": 1000,
                     "color_jitter": 0.4, "validate_every_epoch": True, "seed": 42},
        "protocol": dict(PROTOCOL_DEFAULTS[protocol]),
        "events_path": "-",
    }


# flag dest -> (section or None, field in the job file)
_OVERRIDES = {
    "run_id": (None, "run_id"), "workload_id": (None, "workload_id"), "job": (None, "job"),
    "model": (None, "model"), "batch_size": (None, "batch_size"), "events": (None, "events_path"),
    "data": ("data", "source"), "dataset": ("data", "name"), "data_path": ("data", "path"),
    "image_size": ("data", "image_size"), "train_count": ("data", "train_count"),
    "val_count": ("data", "val_count"), "fraction": ("data", "fraction"), "format": ("data", "format"),
    "lr": ("training", "lr"), "momentum": ("training", "momentum"),
    "weight_decay": ("training", "weight_decay"), "label_smoothing": ("training", "label_smoothing"),
    "schedule": ("training", "schedule"), "precision": ("training", "precision"),
    "channels_last": ("training", "channels_last"), "workers": ("training", "workers"),
    "input_size": ("training", "input_size"), "num_classes": ("training", "num_classes"),
    "color_jitter": ("training", "color_jitter"), "validate": ("training", "validate_every_epoch"),
    "seed": ("training", "seed"),
    "epochs": ("protocol", "epochs"), "warmup_steps": ("protocol", "warmup_steps"),
    "window_seconds": ("protocol", "window_seconds"), "sample_every": ("protocol", "sample_every"),
    "min_iterations": ("protocol", "min_iterations"), "precision_target": ("protocol", "precision_target"),
    "max_window_seconds": ("protocol", "max_window_seconds"),
}


def build_parser():
    p = argparse.ArgumentParser(
        prog="train.py",
        description="Train a timm model under the collocation protocol (see workloads/PROTOCOL.md). "
                    "A job comes from --job-file, from the flags below, or from both (flags win).")
    p.add_argument("--job-file", metavar="JOB.json", help="job file written by the runner")
    p.add_argument("--device", default="cuda", help="torch device (default: %(default)s; cpu for tests)")
    p.add_argument("--events", metavar="PATH", help="event log to append to; - for stdout "
                   "(default: the job file's events_path, else -)")
    p.add_argument("--no-wait", action="store_true",
                   help="release at once instead of waiting for a release line on stdin")
    p.add_argument("--dump-job", action="store_true", help="print the job as a job file and exit")
    g = p.add_argument_group("job (each overrides the job file)")
    g.add_argument("--model", help="timm model name (default: resnet50)")
    g.add_argument("--batch-size", type=int)
    g.add_argument("--data", choices=SOURCES, help="data source (default: synthetic)")
    g.add_argument("--dataset", help=f"dataset name: {', '.join(DATASETS)} set its sizes (default: imagenet)")
    g.add_argument("--data-path", help="imagefolder root, or cache directory of generated sets")
    g.add_argument("--image-size", type=int, help="stored image side of generated sets (0: variable)")
    g.add_argument("--train-count", type=int)
    g.add_argument("--val-count", type=int)
    g.add_argument("--fraction", type=float, help="fraction of the dataset used")
    g.add_argument("--format", choices=FORMATS, help="file format of generated sets")
    g.add_argument("--lr", type=float, help="learning rate (default: 0.1 × batch size / 256)")
    g.add_argument("--momentum", type=float)
    g.add_argument("--weight-decay", type=float)
    g.add_argument("--label-smoothing", type=float)
    g.add_argument("--schedule", choices=SCHEDULES)
    g.add_argument("--precision", choices=PRECISIONS)
    g.add_argument("--channels-last", action=argparse.BooleanOptionalAction)
    g.add_argument("--workers", type=int, help="data loader worker processes")
    g.add_argument("--input-size", type=int, help="input side in pixels (default: the model's)")
    g.add_argument("--num-classes", type=int)
    g.add_argument("--color-jitter", type=float)
    g.add_argument("--validate", action=argparse.BooleanOptionalAction, help="validate after every epoch")
    g.add_argument("--seed", type=int)
    g.add_argument("--protocol", choices=tuple(PROTOCOL_FIELDS), help="paper or quick (default: quick)")
    g.add_argument("--epochs", type=int, help="paper protocol: epochs to train")
    g.add_argument("--warmup-steps", type=int, help="quick protocol: iterations before ready")
    g.add_argument("--window-seconds", type=float, help="quick protocol: seconds measured after release")
    g.add_argument("--min-iterations", type=int,
                   help="quick protocol: iterations trained after release before the window is met")
    g.add_argument("--precision-target", type=float,
                   help="quick protocol: the window is met once the 95%% interval of the throughput is "
                        "within ± this fraction (with --max-window-seconds)")
    g.add_argument("--max-window-seconds", type=float,
                   help="quick protocol: the window is met after this long even if the precision target is not")
    g.add_argument("--sample-every", type=int, help="iterations per sample event")
    g.add_argument("--job", type=int, help="index of the job in its workload")
    g.add_argument("--run-id")
    g.add_argument("--workload-id")
    return p


@dataclass(frozen=True)
class Options:
    """How to run, beside the job itself."""
    device: str
    no_wait: bool
    dump_job: bool
    job_file: Optional[str]


def parse_args(argv=None):
    """Returns (Job, Options). Raises JobError for a bad job; argparse exits on bad flags."""
    args = build_parser().parse_args(argv)
    given = {k: v for k, v in vars(args).items() if k in _OVERRIDES and v is not None}
    if args.protocol is not None:
        given["protocol"] = args.protocol
    if args.job_file:
        obj = read_job_json(args.job_file)
        where = args.job_file + (" (with command-line overrides)" if given else "")
        if not given:
            return job_from_dict(obj, where), _options(args)
        # Check the file alone first, so that its own errors name it plainly.
        job_from_dict(obj, args.job_file)
    else:
        obj, where = default_job(), "command line"
    return job_from_dict(apply_overrides(obj, given), where), _options(args)


def _options(args):
    return Options(device=args.device, no_wait=args.no_wait, dump_job=args.dump_job, job_file=args.job_file)


def apply_overrides(obj, given):
    """Returns a copy of the job dict `obj` with the flags in `given` (dest -> value) applied."""
    obj = copy.deepcopy(obj)
    if "dataset" in given and given["dataset"] in DATASETS and given["dataset"] != obj["data"]["name"]:
        ds = DATASETS[given["dataset"]]
        obj["data"].update({k: ds[k] for k in ("image_size", "train_count", "val_count", "format")})
    if "batch_size" in given and "lr" not in given:
        given = dict(given, lr=paper_lr(given["batch_size"]))
    kind = given.get("protocol", obj["protocol"].get("kind"))
    if kind != obj["protocol"].get("kind") and kind in PROTOCOL_DEFAULTS:
        sample_every = obj["protocol"].get("sample_every")
        obj["protocol"] = dict(PROTOCOL_DEFAULTS[kind])
        if sample_every is not None:
            obj["protocol"]["sample_every"] = sample_every
    for dest, value in given.items():
        if dest == "protocol":
            continue
        section, field = _OVERRIDES[dest]
        if section == "protocol" and field not in PROTOCOL_FIELDS.get(kind, {}):
            raise JobError(f"command line: --{dest.replace('_', '-')} does not apply to the {kind} protocol")
        (obj[section] if section else obj)[field] = value
    return obj
