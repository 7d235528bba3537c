import math
import struct
import unittest

import itertime
from workloads.tests.util import have


class Clock:
    """A host clock that moves only when told to (and by `tick` on every read)."""

    def __init__(self, now=100.0, tick=0.0):
        self.now, self.tick = now, tick

    def __call__(self):
        self.now += self.tick
        return self.now

    def wall(self):
        return self.now + 1.7e9


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


class FakeGPU:
    """A device queue in host seconds: work runs in submission order; an event is stamped
    when the queue reaches it. The device timer runs `rate` times as fast as the host clock
    from `offset`; elapsed times come back as float32 milliseconds, as from CUDA."""

    def __init__(self, clock, rate=1.0, offset=5000.0):
        self.clock, self.rate, self.offset = clock, rate, offset
        self.queue_end = clock.now
        self.waits = 0        # host waits on the device (event or device synchronisations)
        self.recorded = []

    def run(self, seconds):
        self.queue_end = max(self.queue_end, self.clock.now) + seconds

    def device_time(self, t):
        return self.offset + (t - 100.0) * self.rate

    def torch(self):
        gpu = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing
                self.t = None

            def record(self, stream=None):
                self.t = max(gpu.queue_end, gpu.clock.now)
                gpu.queue_end = self.t
                gpu.recorded.append(self.t)

            def query(self):
                return gpu.clock.now >= self.t

            def synchronize(self):
                gpu.waits += 1
                gpu.clock.now = max(gpu.clock.now, self.t)

            def elapsed_time(self, other):
                assert self.query() and other.query(), "elapsed_time of an event not done"
                return f32((gpu.device_time(other.t) - gpu.device_time(self.t)) * 1000.0)

        class Cuda:
            @staticmethod
            def synchronize(device=None):
                gpu.waits += 1
                gpu.clock.now = max(gpu.clock.now, gpu.queue_end)

            @staticmethod
            def current_stream(device=None):
                return "stream"

        Cuda.Event = Event

        class Torch:
            cuda = Cuda

        return Torch


class HostRecorderTest(unittest.TestCase):
    def test_chunks_and_decode(self):
        clock, seen = Clock(), []
        rec = itertime.HostRecorder(chunk=4, on_chunk=seen.append, clock=clock, wall=clock.wall)
        with self.assertRaises(RuntimeError):
            rec.mark(1)
        self.assertEqual(rec.anchor(), 100.0)
        for i in range(10):
            clock.now += 0.25 + i * 1e-3
            rec.mark(128 if i < 9 else 40)
        self.assertEqual(len(seen), 2)  # two full chunks; the last two wait for finish()
        rec.finish()
        self.assertEqual([c["first_step"] for c in seen], [0, 4, 8])
        self.assertEqual(seen[0]["base_mono"], 100.0)
        self.assertEqual(seen[0]["end_us"], [250000, 501000, 753000, 1006000])
        self.assertEqual(seen[0]["images"], 128)
        self.assertEqual(seen[2]["images"], [128, 40])
        self.assertAlmostEqual(seen[1]["base_mono"], 101.006)
        steps, ends, images = itertime.decode(seen)
        self.assertEqual(steps, list(range(10)))
        self.assertEqual(images, [128] * 9 + [40])
        self.assertAlmostEqual(ends[-1], clock.now, places=6)
        self.assertEqual([round(d, 6) for d in itertime.durations(seen)], [0.25 + i * 1e-3 for i in range(10)])
        self.assertEqual(rec.chunks, [])  # not kept when they go to on_chunk
        self.assertIsNone(rec.finish())

    def test_keeps_without_callback_and_syncs_when_asked(self):
        clock, syncs = Clock(), []
        rec = itertime.HostRecorder(sync=lambda: syncs.append(clock.now), chunk=3, clock=clock, wall=clock.wall)
        rec.anchor()
        for _ in range(5):
            clock.now += 0.5
            rec.mark(8)
        self.assertEqual(len(syncs), 6)  # the anchor and every mark
        self.assertEqual(len(rec.chunks), 1)
        steps, ends, images = rec.ends()  # kept chunks and the two still open
        self.assertEqual(steps, [0, 1, 2, 3, 4])
        self.assertEqual([round(e - 100, 6) for e in ends], [0.5, 1.0, 1.5, 2.0, 2.5])
        self.assertEqual(rec.anchors, [{"mono": 100.0, "wall": 100.0 + 1.7e9, "halfwidth": 0.0, "drift": None}])

    def test_factory(self):
        class Dev:
            type = "cpu"
        self.assertIsInstance(itertime.recorder(None, Dev(), lag=2), itertime.HostRecorder)
        self.assertIsInstance(itertime.recorder(None, "cpu"), itertime.HostRecorder)
        with self.assertRaises(ValueError):
            itertime.HostRecorder(chunk=0)


class CudaRecorderTest(unittest.TestCase):
    def setUp(self):
        self.clock = Clock(tick=2e-6)  # every host clock read takes 2 µs
        self.gpu = FakeGPU(self.clock)
        self.torch = self.gpu.torch()

    def recorder(self, **kwargs):
        kwargs.setdefault("clock", self.clock)
        kwargs.setdefault("wall", self.clock.wall)
        return itertime.CudaRecorder(self.torch, "cuda:0", **kwargs)

    def test_lagged_reads_never_wait(self):
        rec = self.recorder(lag=3, chunk=1000)
        self.clock.now += 1.0
        rec.anchor()
        waits = self.gpu.waits
        ref = rec.anchors[0]
        self.assertLess(ref["halfwidth"], 1e-5)
        self.assertLess(abs(ref["mono"] - self.gpu.recorded[-1]), 1e-5)
        truth = []
        for i in range(50):
            self.gpu.run(0.040)      # the step's device work
            self.clock.now += 0.010  # the host issues it in 10 ms, so it runs ahead...
            rec.mark(128)
            truth.append(self.gpu.recorded[-1])  # when the device reached the step's event
            if i > 10:               # ...until something makes it wait (the allocator, a full queue)
                self.clock.now = max(self.clock.now, self.gpu.queue_end - 0.1)
            self.assertGreaterEqual(rec.pending, min(i + 1, 3))
        self.assertEqual(self.gpu.waits, waits)  # not one wait in the loop
        self.assertGreater(rec.done, 40)
        rec.finish()
        self.assertEqual(rec.done, 50)
        self.assertEqual(rec.pending, 0)
        steps, ends, images = rec.ends()
        self.assertLess(max(abs(a - b) for a, b in zip(ends, truth)), 2e-6)
        self.assertEqual(images, [128] * 50)
        self.assertLess(len(rec._free) + 1, 12)  # events are reused, not made anew each step

    def test_unfinished_events_stay_pending(self):
        rec = self.recorder(lag=0)
        rec.anchor()
        for _ in range(5):
            self.gpu.run(1.0)
            rec.mark(4)  # the device is seconds behind: nothing can be read yet
        self.assertEqual((rec.done, rec.pending), (0, 5))
        self.clock.now += 2.5
        rec.mark(4)  # the first two are done by now
        self.assertEqual((rec.done, rec.pending), (2, 4))
        rec.finish()
        self.assertEqual(rec.done, 6)
        self.assertEqual(rec.reads_waited, 4)

    def test_chunks_and_reanchor_with_drift(self):
        self.gpu.rate = 1 + 20e-6  # the device timer runs 20 ppm fast
        seen = []
        rec = self.recorder(lag=2, chunk=100, on_chunk=seen.append)
        rec.anchor()
        truth = []
        for _ in range(250):  # 250 steps of 0.4 s: 100 s
            self.gpu.run(0.4)
            self.clock.now = self.gpu.queue_end - 0.2
            rec.mark(32)
            truth.append(self.gpu.recorded[-1])
        self.assertEqual([c["first_step"] for c in seen], [0, 100])
        rec.anchor()  # the chain has drifted 2 ms from the host clock
        self.assertAlmostEqual(rec.anchors[1]["drift"], -100 * 20e-6, delta=5e-5)
        for _ in range(10):
            self.gpu.run(0.4)
            rec.mark(32)
            truth.append(self.gpu.recorded[-1])
        rec.finish()
        steps, ends, images = itertime.decode(seen)
        self.assertEqual(steps, list(range(260)))
        errors = [a - b for a, b in zip(ends, truth)]
        self.assertAlmostEqual(errors[249], 100 * 20e-6, delta=5e-5)  # the drift before the anchor
        # Re-aligned by the anchor, then drifting again at 20 ppm (8 µs per 0.4 s step).
        self.assertLess(abs(errors[250]), 1e-5)
        self.assertLess(max(abs(e) for e in errors[250:]), 10 * 0.4 * 20e-6 + 5e-6)
        # Chained float32 intervals: no loss of precision however long the run.
        self.assertEqual(len(itertime.durations(seen)), 260)
        self.assertAlmostEqual(seen[1]["base_mono"], ends[99], delta=1e-6)  # ends: whole µs

    def test_mark_needs_an_anchor(self):
        rec = self.recorder()
        with self.assertRaises(RuntimeError):
            rec.mark(1)
        with self.assertRaises(ValueError):
            self.recorder(lag=-1)


class ThroughputCiTest(unittest.TestCase):
    """throughput_ci on numbers worked out by hand."""

    def test_aligned_batches(self):
        # 20 iterations of 1 s from t = 100: k = 4 batches of 5 s, each of 5 whole iterations,
        # at 10, 12, 8 and 10 images/s. Mean 10; s = sqrt(8/3); half-width 3.182 * s / 2.
        ends = [100.0 + i for i in range(1, 21)]
        images = [10] * 5 + [12] * 5 + [8] * 5 + [10] * 5
        mean, ci_rel = itertime.throughput_ci(100.0, ends, images)
        self.assertAlmostEqual(mean, 10.0, places=12)
        self.assertAlmostEqual(ci_rel, 3.182 * math.sqrt(8 / 3) / 2 / 10, places=12)
        self.assertAlmostEqual(ci_rel, 0.259809, places=6)

    def test_straddling_iterations_are_credited_pro_rata(self):
        # 20 iterations of 10 images from 0: the first ends at 2, then one a second up to 21.
        # k = 4 batches of 5.25 s: the first credits 10 + 30 + 0.25 * 10 = 42.5 images
        # (170/21 img/s), the others 52.5 (10 img/s). Mean 200/21, s = 20/21, so
        # ci_rel = 3.182 * (20/21) / 2 / (200/21) = 3.182 / 20.
        ends = [2.0] + [float(j + 1) for j in range(2, 21)]
        mean, ci_rel = itertime.throughput_ci(0.0, ends, [10] * 20)
        self.assertAlmostEqual(mean, 200 / 21, places=12)
        self.assertAlmostEqual(ci_rel, 0.1591, places=12)

    def test_batches_between_4_and_10(self):
        # k = min(10, N // 5): 19 iterations give 3 batches, too few; a steady rate gives 0.
        self.assertIsNone(itertime.throughput_ci(0.0, [0.5 * i for i in range(1, 20)], [4] * 19))
        self.assertEqual(itertime.throughput_ci(0.0, [0.5 * i for i in range(1, 21)], [4] * 20), (8.0, 0.0))
        # 60 iterations: 10 batches (t = 2.262 with 9 degrees of freedom), one of them slow.
        ends = [float(i) for i in range(1, 61)]
        images = [6] * 6 + [12] * 54  # the first batch (6 s) at 6 img/s, the nine others at 12
        mean, ci_rel = itertime.throughput_ci(0.0, ends, images)
        self.assertAlmostEqual(mean, 11.4, places=12)
        s = math.sqrt((5.4 ** 2 + 9 * 0.6 ** 2) / 9)
        self.assertAlmostEqual(ci_rel, 2.262 * s / math.sqrt(10) / 11.4, places=12)
        # No time or no images: no interval.
        self.assertIsNone(itertime.throughput_ci(5.0, [5.0] * 20, [4] * 20))
        self.assertIsNone(itertime.throughput_ci(0.0, ends, [0] * 60))

    def test_recorder_history(self):
        clock = Clock()
        rec = itertime.HostRecorder(chunk=4, on_chunk=lambda c: None, history=True, clock=clock,
                                    wall=clock.wall)
        start = rec.anchor()
        images = [10] * 5 + [12] * 5 + [8] * 5 + [10] * 5
        for i in range(20):
            clock.now += 1.0
            rec.mark(images[i])
        self.assertEqual(len(rec.history_ends), 20)  # emitted chunks and the open one
        mean, ci_rel = itertime.throughput_ci(start, rec.history_ends, rec.history_images)
        self.assertAlmostEqual(ci_rel, 0.259809, places=6)
        self.assertIsNone(itertime.HostRecorder().history_ends)


@unittest.skipUnless(have("torch"), "PyTorch is needed")
class TorchTest(unittest.TestCase):
    def train(self, rec, steps=6):
        import torch
        device = getattr(rec, "device", None) or "cpu"
        model = torch.nn.Linear(16, 4).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 16, device=device), torch.randint(0, 4, (8,), device=device)
        rec.anchor()
        for _ in range(steps):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            rec.mark(8)
        rec.finish()
        return rec.ends()

    def test_cpu(self):
        import torch
        rec = itertime.recorder(torch, torch.device("cpu"))
        self.assertIsInstance(rec, itertime.HostRecorder)
        steps, ends, images = self.train(rec)
        self.assertEqual(steps, list(range(6)))
        self.assertEqual(ends, sorted(ends))
        self.assertGreaterEqual(ends[0], rec.anchors[0]["mono"])

    @unittest.skipUnless(have("torch") and __import__("torch").cuda.is_available(), "no CUDA device")
    def test_cuda(self):
        import time
        import torch
        rec = itertime.recorder(torch, torch.device("cuda", 0), lag=2)
        self.assertIsInstance(rec, itertime.CudaRecorder)
        steps, ends, images = self.train(rec, steps=20)
        after = time.monotonic()
        self.assertEqual(steps, list(range(20)))
        self.assertEqual(ends, sorted(ends))
        self.assertGreater(ends[0], rec.anchors[0]["mono"])
        self.assertLessEqual(ends[-1], after)
        self.assertLess(rec.anchors[0]["halfwidth"], 1e-3)


if __name__ == "__main__":
    unittest.main()
