//! A run's timeline of bounded size however long its window: every sample while the window
//! holds at most [`MAX_POINTS`] of them; beyond that, the window cut into [`BINS`] equal
//! spans, each drawn as two points: the least value of each metric at the span's first
//! sample time and the greatest at its last (one point for a span of one sample). A line
//! through them covers the band the samples fill, which is what a panel a few hundred pixels
//! wide shows of hundreds of thousands of samples; a timeline is held in constant memory as
//! its samples are read.

use crate::model::{TimelinePoint, Window};

/// Spans of a window whose samples are binned.
pub(crate) const BINS: u32 = 2000;
/// The most samples a timeline keeps one by one.
pub(crate) const MAX_POINTS: usize = 2 * BINS as usize;

/// A point's metrics, in one order.
fn values(p: &TimelinePoint) -> [Option<f64>; 7] {
    [
        p.sm_activity_pct,
        p.sm_occupancy_pct,
        p.tensor_activity_pct,
        p.dram_bw_util_pct,
        p.gpu_util_pct,
        p.mem_used_bytes,
        p.power_w,
    ]
}

fn point(t: f64, v: [Option<f64>; 7]) -> TimelinePoint {
    TimelinePoint {
        t,
        sm_activity_pct: v[0],
        sm_occupancy_pct: v[1],
        tensor_activity_pct: v[2],
        dram_bw_util_pct: v[3],
        gpu_util_pct: v[4],
        mem_used_bytes: v[5],
        power_w: v[6],
    }
}

#[derive(Clone, Copy)]
struct Bin {
    first_t: f64,
    last_t: f64,
    samples: u64,
    min: [Option<f64>; 7],
    max: [Option<f64>; 7],
}

impl Bin {
    const EMPTY: Bin = Bin { first_t: 0.0, last_t: 0.0, samples: 0, min: [None; 7], max: [None; 7] };

    fn add(&mut self, p: &TimelinePoint) {
        if self.samples == 0 {
            self.first_t = p.t;
        }
        self.last_t = p.t;
        self.samples += 1;
        for (i, v) in values(p).into_iter().enumerate() {
            if let Some(v) = v {
                self.min[i] = Some(self.min[i].map_or(v, |m| m.min(v)));
                self.max[i] = Some(self.max[i].map_or(v, |m| m.max(v)));
            }
        }
    }
}

/// A timeline being filled, a sample at a time, in time order.
pub(crate) struct TimelineBuf {
    /// The window's length on the jobs' clock: a point's `t` runs over `[0, span]`.
    span: f64,
    points: Vec<TimelinePoint>,
    bins: Option<Vec<Bin>>,
    activity: bool,
}

impl TimelineBuf {
    pub(crate) fn new(w: Window) -> Self {
        TimelineBuf { span: w.job_seconds(), points: Vec::new(), bins: None, activity: false }
    }

    fn bin_of(span: f64, t: f64) -> usize {
        let at = if span > 0.0 { (t / span * f64::from(BINS)).floor() } else { 0.0 };
        // Also NaN → 0.
        (at.max(0.0) as usize).min(BINS as usize - 1)
    }

    pub(crate) fn push(&mut self, p: TimelinePoint) {
        self.activity |= p.sm_activity_pct.is_some();
        if self.bins.is_none() {
            self.points.push(p);
            if self.points.len() <= MAX_POINTS {
                return;
            }
            let mut bins = vec![Bin::EMPTY; BINS as usize];
            for p in self.points.drain(..) {
                bins[Self::bin_of(self.span, p.t)].add(&p);
            }
            self.points = Vec::new();
            self.bins = Some(bins);
            return;
        }
        if let Some(bins) = &mut self.bins {
            bins[Self::bin_of(self.span, p.t)].add(&p);
        }
    }

    /// Whether any sample has SM activity.
    pub(crate) fn has_activity(&self) -> bool {
        self.activity
    }

    /// The points, and the number of spans when the samples were binned.
    pub(crate) fn finish(self) -> (Vec<TimelinePoint>, Option<u32>) {
        match self.bins {
            None => (self.points, None),
            Some(bins) => {
                let mut out = Vec::with_capacity(2 * bins.len());
                for b in bins.iter().filter(|b| b.samples > 0) {
                    out.push(point(b.first_t, b.min));
                    if b.samples > 1 {
                        out.push(point(b.last_t, b.max));
                    }
                }
                (out, Some(BINS))
            }
        }
    }
}

/// What [`TimelineBuf`] makes of `points` (in time order) over `w`.
#[cfg(test)]
pub(crate) fn bounded(points: Vec<TimelinePoint>, w: Window) -> (Vec<TimelinePoint>, Option<u32>) {
    let mut b = TimelineBuf::new(w);
    for p in points {
        b.push(p);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(seconds: f64) -> Window {
        Window { start_mono: 100.0, end_mono: 100.0 + seconds, seconds, clock_scale: 1.0 }
    }

    fn p(t: f64, v: f64) -> TimelinePoint {
        point(t, [Some(v), Some(v / 2.0), None, Some(1.0), None, Some(v * 1e9), Some(300.0 + v)])
    }

    #[test]
    fn short_timelines_keep_every_sample() {
        let pts: Vec<_> = (0..MAX_POINTS).map(|i| p(i as f64 * 0.01, (i % 97) as f64)).collect();
        let (got, bins) = bounded(pts.clone(), w(MAX_POINTS as f64 * 0.01));
        assert_eq!((got, bins), (pts, None));
    }

    #[test]
    fn long_timelines_keep_each_spans_extremes() {
        // 10 s at 1 kHz: 10,000 samples, 5 per span.
        let n = 10_000;
        let pts: Vec<_> = (0..n).map(|i| p(i as f64 * 0.001, ((i * 37) % 101) as f64)).collect();
        let (got, bins) = bounded(pts.clone(), w(10.0));
        assert_eq!(bins, Some(BINS));
        assert_eq!(got.len(), 2 * BINS as usize);
        assert!(got.windows(2).all(|x| x[0].t <= x[1].t), "in time order");
        for (k, pair) in got.chunks(2).enumerate() {
            let inside: Vec<&TimelinePoint> =
                pts.iter().filter(|q| ((q.t / 10.0 * 2000.0).floor() as usize).min(1999) == k).collect();
            assert_eq!(pair[0].t, inside[0].t);
            assert_eq!(pair[1].t, inside.last().unwrap().t);
            let lo = inside.iter().map(|q| q.sm_activity_pct.unwrap()).fold(f64::INFINITY, f64::min);
            let hi = inside.iter().map(|q| q.sm_activity_pct.unwrap()).fold(f64::NEG_INFINITY, f64::max);
            assert_eq!((pair[0].sm_activity_pct, pair[1].sm_activity_pct), (Some(lo), Some(hi)));
            assert_eq!(pair[0].power_w, Some(300.0 + lo));
            assert_eq!(pair[1].mem_used_bytes, Some(hi * 1e9));
            assert_eq!((pair[0].tensor_activity_pct, pair[1].tensor_activity_pct), (None, None));
        }
    }

    #[test]
    fn gaps_and_lone_samples_and_odd_times() {
        // Samples only in the first and the last tenth, one of them alone in its span, one
        // before the window and one after it (clamped into the end spans), one metric
        // missing in some samples.
        let mut pts: Vec<_> = (0..MAX_POINTS).map(|i| p(i as f64 * 0.0002, 5.0)).collect();
        pts[3].sm_occupancy_pct = None;
        pts.insert(0, p(-0.5, 9.0));
        pts.push(p(5.0, 3.0));
        pts.push(p(9.9975, 7.0));
        pts.push(p(12.0, 1.0));
        let (got, bins) = bounded(pts, w(10.0));
        assert_eq!(bins, Some(BINS));
        assert_eq!(got[0].t, -0.5);
        assert_eq!(got[0].sm_activity_pct, Some(5.0));
        assert_eq!(got[1].sm_activity_pct, Some(9.0));
        let lone: Vec<&TimelinePoint> = got.iter().filter(|q| q.t == 5.0).collect();
        assert_eq!(lone.len(), 1);
        assert_eq!(lone[0].sm_activity_pct, Some(3.0));
        let end = &got[got.len() - 2..];
        assert_eq!((end[0].t, end[1].t), (9.9975, 12.0));
        assert_eq!((end[0].sm_activity_pct, end[1].sm_activity_pct), (Some(1.0), Some(7.0)));
        // A zero-length window puts everything in one span.
        let (one, _) = bounded((0..=MAX_POINTS).map(|i| p(i as f64, 1.0)).collect(), w(0.0));
        assert_eq!(one.len(), 2);
    }
}
