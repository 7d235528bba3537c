#!/usr/bin/env python3
"""The training job: one timm model trained with the paper's settings, speaking the
protocol of PROTOCOL.md (events on a JSON-lines log, one release line on stdin).

    python3 workloads/train.py --job-file JOB.json
    python3 workloads/train.py --model resnet50 --data synthetic --batch-size 128 \\
        --protocol quick --window-seconds 20 --no-wait

Exit status: 0 done, 1 error, 2 bad job or flags, 3 aborted before release, 4 out of memory.
PyTorch and timm are imported only when a job runs, so the helpers here import without them.
"""

import json
import math
import os
import platform
import random
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import datagen  # noqa: E402  (standard library only at import: numpy and Pillow load when a set is made)

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_ABORTED, EXIT_OOM = 0, 1, 2, 3, 4
SLOW_DATA_SECONDS = 0.1
CHUNK_SECONDS = 1.0  # protocol 2: an `iterations` event about every second
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


class DataError(Exception):
    """The job's data cannot be used (event kind `data`)."""


class UserError(Exception):
    """A mistake in the job or its environment, reported without a traceback."""


class Diverged(Exception):
    """The training loss is no longer a finite number."""


def log(message):
    print(f"train.py: {message}", file=sys.stderr, flush=True)


# --- data (torch-free helpers) --------------------------------------------------------

def scan_split(root, class_to_idx=None):
    """Lists (path, class index) of the images in an ImageFolder split (`root/<class>/<file>`),
    sorted. Classes map to indices by sorted name unless `class_to_idx` is given (the
    training split's mapping, for validation)."""
    if not os.path.isdir(root):
        raise DataError(f"{root}: no such directory")
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    if class_to_idx is None:
        class_to_idx = {c: i for i, c in enumerate(classes)}
    samples = []
    for c in classes:
        if c not in class_to_idx:
            raise DataError(f"{root}/{c}: a class the training split does not have")
        names = sorted(e.name for e in os.scandir(os.path.join(root, c)) if e.is_file())
        samples += [(os.path.join(root, c, n), class_to_idx[c])
                    for n in names if n.lower().endswith(IMAGE_EXTENSIONS)]
    if not samples:
        raise DataError(f"{root}: no images in class folders")
    return samples, class_to_idx


def subset(samples, fraction, seed):
    """A deterministic `fraction` of the samples, in their order."""
    if fraction >= 1:
        return samples
    keep = sorted(random.Random(seed).sample(range(len(samples)), max(1, round(len(samples) * fraction))))
    return [samples[i] for i in keep]


class FileDataset:
    """Map-style dataset of (path, label): loads the image as RGB and applies `transform`
    (which timm's loader sets)."""

    def __init__(self, samples, transform):
        self.samples, self.transform = samples, transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        from PIL import Image
        path, label = self.samples[index]
        with open(path, "rb") as f:
            image = Image.open(f).convert("RGB")
        return self.transform(image), label


class SyntheticSource:
    """One batch of random tensors made on the device and served for every iteration (no
    loader); an epoch is `images // batch` iterations."""

    def __init__(self, torch, batch, images, shape, classes, device, seed, channels_last):
        gen = torch.Generator(device=device).manual_seed(seed)
        self.x = torch.randn((batch, 3) + shape, device=device, generator=gen)
        if channels_last:
            self.x = self.x.contiguous(memory_format=torch.channels_last)
        self.y = torch.randint(0, classes, (batch,), device=device, generator=gen)
        self.batch, self.images = batch, images
        self.steps_per_epoch = images // batch

    def epoch(self, partial=False):
        """Full batches only, unless `partial` (validation covers every image)."""
        for start in range(0, self.images if partial else self.steps_per_epoch * self.batch, self.batch):
            n = min(self.batch, self.images - start)
            yield self.x[:n], self.y[:n]


class LoaderSource:
    """A loader's batches on the device, in the job's memory format."""

    def __init__(self, torch, loader, device, channels_last):
        self.loader, self.device = loader, device
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format

    def epoch(self, partial=False):
        for x, y in self.loader:
            x = x.to(self.device, non_blocking=True).contiguous(memory_format=self.memory_format)
            yield x, y.to(self.device, non_blocking=True)


class StopLine:
    """Protocol 2, after release: a thread reads the runner's next stdin line. `stop`, any
    other line and end of input all end the window (`is_set()`); `set()` ends it from here
    (a job run with --no-wait stops itself once the window is met)."""

    def __init__(self, stdin):
        self.event = threading.Event()
        self.seen_mono = None
        if stdin is not None:
            threading.Thread(target=self._read, args=(stdin,), daemon=True).start()

    def _read(self, stdin):
        try:
            stdin.readline()
        except (OSError, ValueError):
            pass
        self.set()

    def set(self):
        if self.seen_mono is None:
            self.seen_mono = time.monotonic()
        self.event.set()

    def is_set(self):
        return self.event.is_set()


class Stream:
    """Batches of a source epoch after epoch: `next()` gives (batch, seconds waited), with
    batch None once at the end of each epoch."""

    def __init__(self, source):
        self.source, self.it = source, None

    def next(self):
        if self.it is None:
            self.it = iter(self.source.epoch())
        start = time.monotonic()
        batch = next(self.it, None)
        wait = time.monotonic() - start
        if batch is None:
            self.it = None
        return batch, wait


# --- the job ---------------------------------------------------------------------------

class Trainer:
    """One job: setup, warm-up, the wait for release, measured training."""

    def __init__(self, job, opts, writer, started):
        self.job, self.opts, self.writer, self.started = job, opts, writer, started
        self.cuda = False  # true once a CUDA device is in use (then memory is reported)

    def emit(self, event, **fields):
        return self.writer.emit(event, **fields)

    def close(self):
        """Lets go of the data loaders (their workers are stopped and joined when freed)."""
        self.stream = self.train_source = self.val_source = None

    def run(self):
        """Runs the job; returns (end reason, exit code). Errors propagate."""
        self.setup()
        warmup_steps = self.job.protocol.warmup_steps or 0
        t_warm = time.monotonic()
        self.warm_up(warmup_steps)
        now = time.monotonic()
        self.emit("ready", setup_seconds=t_warm - self.started, warmup_seconds=now - t_warm,
                  warmup_steps=warmup_steps)
        log(f"job {self.job.job}: ready ({t_warm - self.started:.1f} s setup, "
            f"{now - t_warm:.1f} s warm-up)")
        if not self.wait_for_release():
            log(f"job {self.job.job}: aborted before release")
            return "aborted", EXIT_ABORTED
        self.emit("release")
        if self.job.protocol.kind == "quick":
            self.measure_window()
        else:
            self.measure()
        return ("completed" if self.job.protocol.kind == "paper" else "window_done"), EXIT_OK

    # setup -------------------------------------------------------------------------

    def setup(self):
        job, t = self.job, self.job.training
        try:
            import torch
            import timm
            import timm.data
            import timm.optim
        except ImportError as e:
            raise UserError(f"PyTorch and timm are needed: {e}") from None
        self.torch = torch
        device = torch.device(self.opts.device)
        on_cuda = device.type == "cuda" and torch.cuda.is_available()
        if on_cuda and device.index is None:
            # `cuda` alone: the first visible device (CUDA_VISIBLE_DEVICES picks it).
            device = torch.device("cuda", 0)
        cudnn = torch.backends.cudnn.version() if on_cuda else None
        self.emit("versions", python=platform.python_version(), torch=torch.__version__,
                  timm=timm.__version__, cuda=torch.version.cuda,
                  cudnn=None if cudnn is None else str(cudnn),
                  device=torch.cuda.get_device_name(device) if on_cuda else device.type)
        if device.type == "cuda" and not on_cuda:
            raise UserError("CUDA is not available here (use --device cpu to train on the CPU)")
        if on_cuda:
            torch.cuda.set_device(device)
            torch.backends.cudnn.benchmark = True
            self.cuda = True
        self.device = device
        random.seed(t.seed)
        torch.manual_seed(t.seed)

        if not timm.is_model(job.model):
            raise UserError(f"{job.model!r} is not a timm model")
        model = timm.create_model(job.model, pretrained=False, num_classes=t.num_classes)
        cfg = timm.data.resolve_data_config({}, model=model)
        self.shape = (t.input_size, t.input_size) if t.input_size else tuple(cfg["input_size"][1:])
        model.to(device)
        if t.channels_last:
            model.to(memory_format=torch.channels_last)
        model.train()
        self.model = model
        self.optimizer = timm.optim.create_optimizer_v2(
            model, opt="sgd", lr=t.lr, weight_decay=t.weight_decay, momentum=t.momentum)
        self.criterion = torch.nn.CrossEntropyLoss(label_smoothing=t.label_smoothing).to(device)
        amp = t.precision == "amp"
        self.autocast = lambda: torch.autocast(
            device.type, dtype=torch.float16 if on_cuda else torch.bfloat16, enabled=amp)
        self.scaler = None
        if amp and on_cuda:
            scaler_class = getattr(torch.amp, "GradScaler", None)
            self.scaler = scaler_class("cuda") if scaler_class else torch.cuda.amp.GradScaler()
        self.train_source, self.val_source = self.build_data(timm, cfg)
        self.stream = Stream(self.train_source)

    def build_data(self, timm, cfg):
        """Returns (training source, validation source or None)."""
        torch, job, t, data = self.torch, self.job, self.job.training, self.job.data
        channels_last = t.channels_last
        validating = job.protocol.kind == "paper" and t.validate_every_epoch
        if data.source == "synthetic":
            self.check_count(data.train_images)
            train = SyntheticSource(torch, job.batch_size, data.train_images, self.shape,
                                    t.num_classes, self.device, t.seed, channels_last)
            val = None
            if validating and data.val_images:
                val = SyntheticSource(torch, job.batch_size, data.val_images, self.shape,
                                      t.num_classes, self.device, t.seed + 1, channels_last)
            return train, val

        if data.source == "generated":
            params = datagen.params_for_job(job)
            root = datagen.ensure(data.path, params, log=log)
            train_samples, class_to_idx = scan_split(os.path.join(root, "train"))
            val_dir = os.path.join(root, "val")
            val_samples = scan_split(val_dir, class_to_idx)[0] if params.val and validating else []
        else:
            train_samples, class_to_idx = scan_split(os.path.join(data.path, "train"))
            train_samples = subset(train_samples, data.fraction, t.seed)
            val_samples = []
            if validating:
                val_samples = subset(scan_split(os.path.join(data.path, "val"), class_to_idx)[0],
                                     data.fraction, t.seed)
        if len(class_to_idx) > t.num_classes:
            raise DataError(f"{data.path}: {len(class_to_idx)} classes, more than the model's "
                            f"{t.num_classes} (training.num_classes)")
        self.check_count(len(train_samples))
        train = LoaderSource(torch, self.loader(timm, cfg, train_samples, True), self.device, channels_last)
        val = None
        if val_samples:
            val = LoaderSource(torch, self.loader(timm, cfg, val_samples, False), self.device, channels_last)
        log(f"job {job.job}: {len(train_samples)} training and {len(val_samples)} validation "
            f"images, {len(class_to_idx)} classes")
        return train, val

    def check_count(self, images):
        if images < self.job.batch_size:
            raise DataError(f"{images} training images, fewer than one batch of {self.job.batch_size}")

    def loader(self, timm, cfg, samples, train):
        """timm's loader, as timm's train.py makes it: augmentation in the worker processes,
        and on CUDA uint8 batches copied and normalised on the GPU (its prefetcher)."""
        t = self.job.training
        kwargs = {"input_size": (3,) + self.shape, "batch_size": self.job.batch_size, "is_training": train,
                  "use_prefetcher": self.cuda, "mean": cfg["mean"], "std": cfg["std"],
                  "num_workers": t.workers, "persistent_workers": t.workers > 0, "device": self.device}
        if train:
            kwargs.update(hflip=0.5, color_jitter=t.color_jitter, auto_augment=None, re_prob=0.0,
                          interpolation="random")
        else:
            kwargs.update(interpolation=cfg["interpolation"], crop_pct=cfg.get("crop_pct"),
                          crop_mode=cfg.get("crop_mode"))
        return timm.data.create_loader(FileDataset(samples, None), **kwargs)

    # training ----------------------------------------------------------------------

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def train_step(self, x, y):
        """One iteration; returns the loss as a device tensor (no synchronisation)."""
        with self.autocast():
            loss = self.criterion(self.model(x), y)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        return loss.detach()

    def warm_up(self, steps):
        done = 0
        while done < steps:
            batch, _ = self.stream.next()
            if batch is not None:
                self.train_step(*batch)
                done += 1
        self.sync()

    def set_epoch_lr(self, epoch):
        t, p = self.job.training, self.job.protocol
        factor = 1.0
        if t.schedule == "cosine" and p.kind == "paper":
            factor = 0.5 * (1 + math.cos(math.pi * epoch / p.epochs))
        for group in self.optimizer.param_groups:
            group["lr"] = t.lr * factor

    def wait_for_release(self):
        if self.opts.no_wait:
            return True
        if sys.stdin is None:
            return False
        if sys.stdin.isatty():
            log("type release (or abort) and Enter")
        return sys.stdin.readline().strip() == "release"

    def measure_window(self):
        """Protocol 2, quick: trains from release until the runner's stop line, recording the
        end of every iteration without synchronising the device (itertime), its images and its
        data wait, in `iterations` chunks about every second; `window_met` once the job has
        trained `window_seconds` and `min_iterations` since release and, with a precision
        target, once the 95% interval of its throughput is within it or `max_window_seconds`
        have passed (`window_check`). After the stop line it trains one more iteration, issued
        after the line was read, so its records reach past the runner's stop; then
        `window_end`."""
        import itertime
        p, batch = self.job.protocol, self.job.batch_size
        min_iterations = max(1, p.min_iterations or 0)
        stop = StopLine(None if self.opts.no_wait else sys.stdin)
        self.waits, self.waits_first, self.chunks_emitted = [], 0, 0
        rec = itertime.recorder(self.torch, self.device, on_chunk=self.emit_iterations,
                                chunk=itertime.CHUNK, history=True)
        self.recorder = rec
        start = rec.anchor()  # synchronises the device (idle since the warm-up)
        self.emit("window_start", step=0)
        self.loss, steps, images, pending_wait = None, 0, 0, 0.0
        met, stopping, last_flush = False, False, start
        trained, checked_chunks = False, 0  # window_seconds and min_iterations reached; chunks seen
        while True:
            batch_xy, wait = self.stream.next()
            pending_wait += wait
            if batch_xy is None:  # an epoch is over; the loader starts the next one
                continue
            self.loss = self.train_step(*batch_xy)
            rec.mark(batch)
            self.waits.append(pending_wait)
            pending_wait = 0.0
            steps += 1
            images += batch
            if stopping:
                break
            now = time.monotonic()
            if now - last_flush >= CHUNK_SECONDS:
                rec.flush()
                last_flush = now
            if not met:
                # Evaluated when window_seconds and min_iterations are first reached, then at
                # each `iterations` chunk, and at once when max_window_seconds have passed.
                due = not trained or self.chunks_emitted != checked_chunks or (
                    p.max_window_seconds is not None and rec.last_end - start >= p.max_window_seconds)
                if not trained and rec.done >= min_iterations and rec.last_end - start >= p.window_seconds:
                    trained = True
                if trained and due:
                    checked_chunks = self.chunks_emitted
                    met = self.window_check(rec, start)
                    if met and self.opts.no_wait:
                        stop.set()
            stopping = stop.is_set()
        rec.finish()  # waits for the last iteration: the window is over
        loss = float(self.loss.item())
        if not math.isfinite(loss):
            raise Diverged(f"the training loss is {loss} at step {steps}")
        seconds = rec.last_end - start
        if self.cuda:  # the device is idle now: how far its timer and the host clock drifted
            rec.anchor()
            drift = rec.anchors[-1]["drift"]
            if drift is not None:
                log(f"job {self.job.job}: device and host clocks drifted {drift * 1e6:.0f} us apart")
        self.emit("window_end", step=steps, images=images, seconds=seconds)
        log(f"job {self.job.job}: {images} images in {seconds:.1f} s, {images / seconds:.1f} img/s"
            + ("" if met else " (stopped before the window was met)"))

    def window_check(self, rec, start):
        """Protocol 2, quick, once `window_seconds` and `min_iterations` are trained: whether the
        window is met now (then emits `window_met`). Without a precision target it is; with
        one, once the 95% interval of the throughput since `start` over the iterations whose end
        is known (itertime.throughput_ci) is within ±precision_target, or once the last of them
        ends max_window_seconds or more after `start` (precision_met false unless the interval
        is within the target then)."""
        import itertime
        p = self.job.protocol
        seconds = rec.last_end - start
        ci = itertime.throughput_ci(start, rec.history_ends, rec.history_images)
        ci_rel = None if ci is None else ci[1]
        if p.precision_target is None:
            precision_met = None
        elif ci_rel is not None and ci_rel <= p.precision_target:
            precision_met = True
        elif seconds >= p.max_window_seconds:
            precision_met = False
        else:
            return False
        self.emit("window_met", step=rec.done, seconds=seconds, ci_rel=ci_rel, precision_met=precision_met)
        if precision_met is not None:
            log(f"job {self.job.job}: window met after {seconds:.1f} s, throughput ±"
                + ("?" if ci_rel is None else f"{ci_rel * 100:.2f}%")
                + (" (within the target)" if precision_met else
                   f" (the target ±{p.precision_target * 100:g}% not met in {p.max_window_seconds:g} s)"))
        return True

    def emit_iterations(self, chunk):
        """One `iterations` event from an itertime chunk and the iterations' data waits."""
        self.chunks_emitted = getattr(self, "chunks_emitted", 0) + 1
        n = len(chunk["end_us"])
        lo = chunk["first_step"] - self.waits_first
        waits = self.waits[lo:lo + n]
        del self.waits[:lo + n]
        self.waits_first = chunk["first_step"] + n
        images = chunk["images"] if isinstance(chunk["images"], list) else [chunk["images"]] * n
        self.emit("iterations", first_step=chunk["first_step"], base_mono=chunk["base_mono"],
                  end_us=[max(0, int(u)) for u in chunk["end_us"]], images=images,
                  data_wait_us=[max(0, round(w * 1e6)) for w in waits])

    def measure(self):
        """Measured training after release: samples, epochs, the window."""
        p, batch = self.job.protocol, self.job.batch_size
        paper = p.kind == "paper"
        self.sync()
        start = time.monotonic()
        self.emit("window_start", step=0)
        self.step, self.images, self.loss = 0, 0, None
        self.interval = [start, 0, 0.0, 0]  # start, images, data wait, slow steps
        epoch, epoch_start, epoch_images = 0, start, 0
        self.set_epoch_lr(0)
        while True:
            batch_xy, wait = self.stream.next()
            if batch_xy is None:  # an epoch is over
                if paper and self.interval[1]:
                    self.sample()
                self.sync()
                now = time.monotonic()
                if not paper and epoch_images == 0:
                    continue  # the warm-up ended exactly at the end of an epoch
                val = self.validate() if paper and self.val_source else (None, None, None)
                self.emit("epoch_end", epoch=epoch, images=epoch_images, train_seconds=now - epoch_start,
                          val_seconds=val[0], val_top1=val[1], val_loss=val[2])
                log(f"job {self.job.job}: epoch {epoch} done, {epoch_images / (now - epoch_start):.1f} img/s")
                epoch, epoch_images = epoch + 1, 0
                if paper and epoch == p.epochs:
                    break
                if paper:
                    self.set_epoch_lr(epoch)
                    self.interval = [time.monotonic(), 0, 0.0, 0]  # validation is not training
                epoch_start = self.interval[0] if paper else now
                continue
            self.loss = self.train_step(*batch_xy)
            self.step += 1
            self.images += batch
            epoch_images += batch
            self.interval[1] += batch
            self.interval[2] += wait
            self.interval[3] += wait > SLOW_DATA_SECONDS
            if self.step % p.sample_every == 0:
                self.sample()
                if not paper and self.interval[0] - start >= p.window_seconds:
                    break
        self.sync()
        seconds = time.monotonic() - start
        self.emit("window_end", step=self.step, images=self.images, seconds=seconds)
        log(f"job {self.job.job}: {self.images} images in {seconds:.1f} s, {self.images / seconds:.1f} img/s")

    def sample(self):
        self.sync()
        now = time.monotonic()
        loss = float(self.loss.item())
        if not math.isfinite(loss):
            raise Diverged(f"the training loss is {loss} at step {self.step}")
        start, images, wait, slow = self.interval
        self.emit("sample", step=self.step, images=images, seconds=now - start,
                  data_wait_seconds=wait, slow_data_steps=slow, loss=loss)
        self.interval = [now, 0, 0.0, 0]

    def validate(self):
        """Returns (seconds, top-1 in percent, mean cross-entropy) over the validation set."""
        torch = self.torch
        self.sync()
        start = time.monotonic()
        self.model.eval()
        correct = torch.zeros((), device=self.device, dtype=torch.int64)
        loss_sum = torch.zeros((), device=self.device)
        count = 0
        with torch.inference_mode(), self.autocast():
            for x, y in self.val_source.epoch(partial=True):
                out = self.model(x).float()
                loss_sum += torch.nn.functional.cross_entropy(out, y, reduction="sum")
                correct += (out.argmax(dim=1) == y).sum()
                count += y.shape[0]
        self.model.train()
        top1, loss = 100.0 * correct.item() / count, loss_sum.item() / count
        return time.monotonic() - start, top1, loss

    def report_memory(self):
        cuda = self.torch.cuda
        self.emit("memory", allocated_bytes=cuda.memory_allocated(self.device),
                  reserved_bytes=cuda.memory_reserved(self.device),
                  peak_allocated_bytes=cuda.max_memory_allocated(self.device),
                  peak_reserved_bytes=cuda.max_memory_reserved(self.device))


def is_oom(error):
    if type(error).__name__ == "OutOfMemoryError":
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and (
        "CUDA out of memory" in text or "CUDA error: out of memory" in text or "STATUS_ALLOC_FAILED" in text)


def classify(error):
    """(error kind, end reason, exit code, message) for an exception a job raised."""
    message = str(error) or type(error).__name__
    if is_oom(error):
        return "oom", "oom", EXIT_OOM, message
    if isinstance(error, (DataError, datagen.DatasetError)):
        return "data", "error", EXIT_ERROR, message
    if isinstance(error, (UserError, Diverged)):
        return "exception", "error", EXIT_ERROR, message
    if isinstance(error, KeyboardInterrupt):
        return "exception", "error", EXIT_ERROR, "interrupted"
    return "exception", "error", EXIT_ERROR, f"{type(error).__name__}: {message}"


def run_job(job, opts, writer):
    """Runs a job whose hello was written; writes the rest of its events; returns the exit code."""
    trainer = Trainer(job, opts, writer, time.monotonic())
    try:
        reason, code = trainer.run()
    except (Exception, KeyboardInterrupt) as error:
        kind, reason, code, message = classify(error)
        if kind == "exception" and not isinstance(error, (UserError, Diverged, KeyboardInterrupt)):
            traceback.print_exc()
        log(f"job {job.job}: {'out of memory: ' if kind == 'oom' else ''}{message}")
        writer.emit("error", kind=kind, message=message[:4000])
    if trainer.cuda:
        try:
            trainer.report_memory()
        except Exception as error:  # a broken CUDA context cannot report memory
            log(f"job {job.job}: no memory report: {error}")
    writer.emit("end", reason=reason, exit_code=code)
    trainer.close()
    return code


def main(argv=None):
    import events
    import jobspec
    try:
        job, opts = jobspec.parse_args(argv)
    except jobspec.JobError as e:
        print(f"train.py: {e}", file=sys.stderr)
        return EXIT_USAGE
    if opts.dump_job:
        print(json.dumps(job.to_dict(), indent=2))
        return EXIT_OK
    try:
        writer = events.EventWriter.open(job.events_path, job.job)
    except OSError as e:
        print(f"train.py: cannot open the event log {job.events_path}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        writer.emit("hello", pid=os.getpid(), protocol_version=events.PROTOCOL_VERSION, simulated=False)
        return run_job(job, opts, writer)
    finally:
        writer.close()


if __name__ == "__main__":
    # `--via SOCKET ...`: a job forked by a preloaded job server; `--serve SOCKET`: that
    # server (workloads/preload.py). Both are looked for before anything heavy is imported.
    if len(sys.argv) >= 3 and sys.argv[1] in ("--via", "--serve"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import preload
        if sys.argv[1] == "--via":
            sys.exit(preload.client(sys.argv[2], [sys.argv[0]] + sys.argv[3:]))
        sys.exit(preload.serve(sys.argv[2], main))
    sys.exit(main())
