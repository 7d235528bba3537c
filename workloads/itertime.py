"""Per-iteration timing that does not synchronise the device.

A recorder notes the end of every training iteration on the host's monotonic clock
(`time.monotonic()`, CLOCK_MONOTONIC, the clock of the event log and of the runner's
telemetry) together with the images it trained:

* On a CUDA device (`CudaRecorder`) `mark(images)`, called right after the optimizer
  step, records a CUDA event on the current stream and returns at once. Events are read
  back a few iterations later (`lag`), and only once `event.query()` says they are done,
  so the host never waits for the device. Each event's time comes from the GPU's timer:
  the elapsed time from the previous iteration's event (`elapsed_time`), added to the
  previous end, starting from a reference event recorded by `anchor()` while the device
  is idle, whose host monotonic and wall time are known to within a few microseconds.
  Chaining short intervals keeps the float32 milliseconds of `cudaEventElapsedTime`
  exact to about a microsecond however long the run. `anchor()` again, wherever the
  device is synchronised anyway, re-aligns the chain with the host clock and records how
  far the two clocks drifted apart since the previous anchor.
* Elsewhere (`HostRecorder`, the CPU fallback) `mark(images)` takes `time.monotonic()`
  after the step: on the CPU the step has finished when it returns. Given a `sync`
  callable (say `torch.cuda.synchronize`) it synchronises first: the costly reference
  method this module exists to avoid.

Finished iterations are kept in arrays and handed out in chunks, plain JSON-ready dicts:

    {"first_step": 0, "base_mono": 812.403117, "end_us": [31020, 62011, ...], "images": 128}

`end_us[i]` is the end of iteration `first_step + i` in whole microseconds after
`base_mono`, the end of the iteration before the chunk (the first anchor for the first
chunk), so the differences of consecutive `end_us` (from 0) are the iterations' durations;
`images` is one integer when every iteration of the chunk trained as many images, else a
list. `decode()` turns chunks back into steps, end times and images.

    rec = itertime.recorder(torch, device, on_chunk=emit)   # or without on_chunk: keep all
    rec.anchor()             # the device is synchronised here (e.g. at window_start)
    for x, y in batches:
        train_step(x, y)
        rec.mark(len(y))     # records an event; never waits
    rec.finish()             # waits for the last event: call where the job synchronises anyway

`throughput_ci(start, ends, images)` is the 95% confidence interval of a job's throughput
since `start` (batch means; the job's noise-adaptive stopping, PROTOCOL.md); a recorder made
with `history=True` keeps every finished iteration's end and images for it (`history_ends`,
`history_images`).

Standard library only; PyTorch is used only through the `torch` module handed in.
"""

import array
import bisect
import collections
import itertools
import math
import time

CHUNK = 1000   # iterations per chunk
LAG = 4        # events younger than this many iterations are not read back


class _Recorder:
    """Collects finished iterations and cuts them into chunks."""

    def __init__(self, chunk=CHUNK, on_chunk=None, keep=None, history=False, clock=time.monotonic,
                 wall=time.time):
        if chunk < 1:
            raise ValueError("chunk must be at least 1")
        self.chunk_size, self.on_chunk = chunk, on_chunk
        self.keep = on_chunk is None if keep is None else keep
        # With `history`: the end (monotonic seconds) and images of every finished iteration,
        # emitted or not, for throughput_ci.
        self.history_ends = array.array("d") if history else None
        self.history_images = array.array("q") if history else None
        self.clock, self.wall = clock, wall
        self.steps = 0            # iterations marked
        self.anchors = []         # {"mono", "wall", "halfwidth", "drift"} per anchor()
        self.chunks = []          # emitted chunks, when kept
        self._ends = array.array("d")
        self._images = array.array("q")
        self._first = 0           # step of _ends[0]
        self._base = None         # end of the step before _first

    @property
    def last_end(self):
        """Monotonic end of the last finished iteration (the first anchor before any)."""
        return self._ends[-1] if self._ends else self._base

    @property
    def done(self):
        """Iterations whose end is known (emitted or waiting for their chunk)."""
        return self._first + len(self._ends)

    def _finished(self, end, images):
        self._ends.append(end)
        self._images.append(images)
        if self.history_ends is not None:
            self.history_ends.append(end)
            self.history_images.append(images)
        if len(self._ends) >= self.chunk_size:
            self.flush()

    def flush(self):
        """Emits the finished iterations not yet emitted as one chunk (if any); returns it."""
        if not self._ends:
            return None
        base = self._base
        images = list(self._images)
        chunk = {"first_step": self._first, "base_mono": base,
                 "end_us": [round((e - base) * 1e6) for e in self._ends],
                 "images": images[0] if all(i == images[0] for i in images) else images}
        self._first += len(self._ends)
        self._base = self._ends[-1]
        self._ends, self._images = array.array("d"), array.array("q")
        if self.keep:
            self.chunks.append(chunk)
        if self.on_chunk is not None:
            self.on_chunk(chunk)
        return chunk

    def _start(self, mono, wall, halfwidth, drift=None):
        self.anchors.append({"mono": mono, "wall": wall, "halfwidth": halfwidth, "drift": drift})
        if self._base is None:
            self._base = mono

    def ends(self):
        """(steps, end monotonic seconds, images) of the kept chunks and those not yet emitted."""
        steps, ends, images = decode(self.chunks) if self.keep else ([], [], [])
        steps += range(self._first, self.done)
        ends += self._ends
        images += self._images
        return steps, ends, images


class HostRecorder(_Recorder):
    """The end of each iteration read on the host clock when `mark` is called, after
    `sync()` when one is given (the CPU fallback; with a device synchronisation, the
    reference method)."""

    def __init__(self, sync=None, **kwargs):
        super().__init__(**kwargs)
        self.sync = sync

    def anchor(self):
        if self.sync is not None:
            self.sync()
        mono, wall = self.clock(), self.wall()
        self._start(mono, wall, 0.0)
        return mono

    def mark(self, images):
        if self._base is None:
            raise RuntimeError("anchor() first")
        if self.sync is not None:
            self.sync()
        self.steps += 1
        self._finished(self.clock(), images)

    def finish(self):
        return self.flush()


class CudaRecorder(_Recorder):
    """The end of each iteration from a CUDA event recorded after its optimizer step and
    read back `lag` iterations later without waiting (see the module's text)."""

    def __init__(self, torch, device=None, lag=LAG, tries=3, **kwargs):
        super().__init__(**kwargs)
        if lag < 0:
            raise ValueError("lag must be at least 0")
        self.torch, self.device, self.lag, self.tries = torch, device, lag, max(1, tries)
        self._free = []                     # events to record again
        self._pending = collections.deque()  # (event, images), oldest first
        self._prev = None                   # the event the next one is measured from
        self._prev_mono = None              # its time on the host clock
        self.reads_waited = 0               # events read by finish() or anchor() after a wait

    def _event(self):
        return self._free.pop() if self._free else self.torch.cuda.Event(enable_timing=True)

    def _recycle(self, event):
        if event is not None:
            self._free.append(event)

    def _stream(self):
        return self.torch.cuda.current_stream(self.device)

    def anchor(self):
        """Synchronises the device and records a reference event while it is idle; returns its
        host monotonic time. The chain of iterations goes on from it."""
        self.torch.cuda.synchronize(self.device)
        self.reads_waited += len(self._pending)
        self._drain(0)
        best = None
        for _ in range(self.tries):
            event = self._event()
            t0, w0 = self.clock(), self.wall()
            event.record(self._stream())
            event.synchronize()
            t1 = self.clock()
            if best is None or t1 - t0 < best[2] - best[1]:
                if best is not None:
                    self._recycle(best[0])
                best = (event, t0, t1, w0)
            else:
                self._recycle(event)
        event, t0, t1, w0 = best
        mono, halfwidth = (t0 + t1) / 2, (t1 - t0) / 2
        drift = None
        if self._prev is not None:
            # Where the chain puts the new reference, against where the host clock does.
            drift = mono - (self._prev_mono + self._prev.elapsed_time(event) / 1000.0)
            self._recycle(self._prev)
        self._prev, self._prev_mono = event, mono
        self._start(mono, w0 + (mono - t0), halfwidth, drift)
        return mono

    def mark(self, images):
        """Records the end of the iteration just issued; reads back finished older ones."""
        if self._prev is None:
            raise RuntimeError("anchor() first")
        event = self._event()
        event.record(self._stream())
        self._pending.append((event, images))
        self.steps += 1
        self._drain(self.lag)

    def _drain(self, keep):
        """Reads back pending events, oldest first, while more than `keep` are pending and the
        oldest has finished on the device; never waits."""
        while len(self._pending) > keep:
            event, images = self._pending[0]
            if not event.query():
                break
            self._pending.popleft()
            self._prev_mono += self._prev.elapsed_time(event) / 1000.0
            self._recycle(self._prev)
            self._prev = event
            self._finished(self._prev_mono, images)

    @property
    def pending(self):
        return len(self._pending)

    def finish(self):
        """Waits for the last marked event, reads every pending one back and emits the last
        chunk. Blocks: call it where the job synchronises the device anyway."""
        if self._pending:
            self._pending[-1][0].synchronize()
            self.reads_waited += len(self._pending)
            self._drain(0)
        return self.flush()


def recorder(torch, device, **kwargs):
    """A CudaRecorder for a CUDA device, a HostRecorder (no synchronisation) for any other."""
    if getattr(device, "type", device) == "cuda":
        return CudaRecorder(torch, device, **kwargs)
    kwargs.pop("lag", None)
    kwargs.pop("tries", None)
    return HostRecorder(**kwargs)


def decode(chunks):
    """(steps, end monotonic seconds, images per iteration) of a sequence of chunks."""
    steps, ends, images = [], [], []
    for c in chunks:
        n = len(c["end_us"])
        steps += range(c["first_step"], c["first_step"] + n)
        ends += [c["base_mono"] + us * 1e-6 for us in c["end_us"]]
        images += c["images"] if isinstance(c["images"], list) else [c["images"]] * n
    return steps, ends, images


def durations(chunks):
    """Seconds of each iteration of a sequence of consecutive chunks (from the previous end,
    the first from its chunk's base)."""
    out = []
    for c in chunks:
        prev = 0
        for us in c["end_us"]:
            out.append((us - prev) * 1e-6)
            prev = us
    return out


# t(0.975, df) of Student's t distribution, for df = k - 1 batches of throughput_ci.
T975 = {3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def throughput_ci(start, ends, images):
    """The 95% confidence interval of a job's throughput over [start, ends[-1]], by batch means;
    returns (throughput, ci_rel), or None while there is no interval yet.

    `ends[i]` is the end of finished iteration i (non-decreasing; the same clock as `start`,
    the job's window start) and `images[i]` its images; iteration i covers
    (ends[i-1], ends[i]], the first one (start, ends[0]]. With N = len(ends) iterations and
    k = min(10, N // 5) batches (none below 4), [start, end] is split into k sub-intervals of
    equal duration; each has the throughput of the images credited to it over its duration,
    an iteration that straddles an edge credited to both sides pro rata in time (one that
    ends exactly on an edge belongs to the earlier side). `throughput` is the mean of the k
    batch throughputs (the images of every iteration over end - start); with s their sample
    standard deviation (divisor k - 1), the half-width is t(0.975, k - 1) * s / sqrt(k) with t
    from T975, and `ci_rel` = half-width / throughput. None also when end <= start or no
    image was trained. The analysis computes the same interval for its tables; so does the
    runner's simulated job (crates/trace/src/precision.rs).
    """
    n = len(ends)
    k = min(10, n // 5)
    if k < 4:
        return None
    end = ends[-1]
    if not end > start:
        return None
    cum = list(itertools.accumulate(images, initial=0))  # cum[i]: images of iterations < i
    if cum[n] <= 0:
        return None

    def credited(t):
        """Images credited to (start, t]."""
        i = bisect.bisect_right(ends, t)  # the first iteration ending after t
        if i >= n:
            return cum[n]
        lo = max(start, ends[i - 1]) if i > 0 else start
        hi = ends[i]
        share = (t - lo) / (hi - lo) if hi > lo and t > lo else 0.0
        return cum[i] + images[i] * share

    width = (end - start) / k
    edges = [0.0] + [credited(start + j * width) for j in range(1, k)] + [float(cum[n])]
    rates = [(edges[j + 1] - edges[j]) / width for j in range(k)]
    mean = sum(rates) / k
    s = math.sqrt(sum((r - mean) ** 2 for r in rates) / (k - 1))
    return mean, T975[k - 1] * s / math.sqrt(k) / mean
