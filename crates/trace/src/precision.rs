//! The 95% confidence interval of a job's throughput over its window, by batch means: the
//! interval that ends a `quick` window with a precision target (`workloads/PROTOCOL.md`).
//! The same definition as `throughput_ci` in `workloads/itertime.py`, which the training
//! job evaluates; the runner's simulated job uses this one.

/// t(0.975, df) of Student's t distribution for df = 3..=9 (k = 4..=10 batches).
const T975: [f64; 7] = [3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262];

/// The interval of [`throughput_ci`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThroughputCi {
    /// Batches (4 to 10).
    pub batches: usize,
    /// Images per second over the window: the mean of the batch throughputs.
    pub throughput: f64,
    /// Half-width of the 95% interval, images per second.
    pub half_width: f64,
    /// `half_width / throughput`.
    pub ci_rel: f64,
}

/// The interval over `[start, ends.last()]`; `None` while there is none.
///
/// `ends[i]` is the end of finished iteration `i` (non-decreasing, on the clock of `start`,
/// the window start) and `images[i]` its images; iteration `i` covers `(ends[i-1], ends[i]]`,
/// the first `(start, ends[0]]`. With N iterations, k = min(10, N / 5) batches (none below
/// 4): the window is split into k sub-intervals of equal duration, each with the throughput
/// of the images credited to it over its duration (an iteration that straddles an edge is
/// credited to both sides pro rata in time; one that ends on an edge to the earlier side).
/// The throughput is their mean; the half-width is t(0.975, k − 1) · s / √k with s their
/// sample standard deviation (divisor k − 1). `None` also when the window has no duration or
/// no images.
pub fn throughput_ci(start: f64, ends: &[f64], images: &[u64]) -> Option<ThroughputCi> {
    let n = ends.len().min(images.len());
    let k = (n / 5).min(10);
    if k < 4 {
        return None;
    }
    let (ends, images) = (&ends[..n], &images[..n]);
    let end = ends[n - 1];
    if end.partial_cmp(&start) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let mut cum = Vec::with_capacity(n + 1); // cum[i]: images of the iterations before i
    cum.push(0.0f64);
    for &m in images {
        cum.push(cum.last().unwrap() + m as f64);
    }
    let total = cum[n];
    if total <= 0.0 {
        return None;
    }
    // Images credited to (start, t].
    let credited = |t: f64| -> f64 {
        let i = ends.partition_point(|&e| e <= t); // the first iteration ending after t
        if i >= n {
            return total;
        }
        let lo = if i > 0 { ends[i - 1].max(start) } else { start };
        let hi = ends[i];
        let share = if hi > lo && t > lo { (t - lo) / (hi - lo) } else { 0.0 };
        cum[i] + images[i] as f64 * share
    };
    let width = (end - start) / k as f64;
    let mut edges = vec![0.0];
    edges.extend((1..k).map(|j| credited(start + j as f64 * width)));
    edges.push(total);
    let rates: Vec<f64> = edges.windows(2).map(|w| (w[1] - w[0]) / width).collect();
    let mean = rates.iter().sum::<f64>() / k as f64;
    let s = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (k - 1) as f64).sqrt();
    let half_width = T975[k - 4] * s / (k as f64).sqrt();
    Some(ThroughputCi { batches: k, throughput: mean, half_width, ci_rel: half_width / mean })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The numbers of workloads/tests/test_itertime.py (ThroughputCiTest), worked out by hand.

    #[test]
    fn aligned_batches() {
        let ends: Vec<f64> = (1..=20).map(|i| 100.0 + i as f64).collect();
        let images: Vec<u64> = [10, 12, 8, 10].iter().flat_map(|&m| [m; 5]).collect();
        let ci = throughput_ci(100.0, &ends, &images).unwrap();
        assert_eq!(ci.batches, 4);
        assert!((ci.throughput - 10.0).abs() < 1e-12, "{ci:?}");
        assert!((ci.ci_rel - 3.182 * (8.0f64 / 3.0).sqrt() / 2.0 / 10.0).abs() < 1e-12, "{ci:?}");
    }

    #[test]
    fn straddling_iterations_are_credited_pro_rata() {
        let mut ends = vec![2.0];
        ends.extend((2..21).map(|j| (j + 1) as f64));
        let ci = throughput_ci(0.0, &ends, &[10; 20]).unwrap();
        assert!((ci.throughput - 200.0 / 21.0).abs() < 1e-12, "{ci:?}");
        assert!((ci.ci_rel - 0.1591).abs() < 1e-12, "{ci:?}");
    }

    #[test]
    fn between_4_and_10_batches() {
        let half: Vec<f64> = (1..=20).map(|i| 0.5 * i as f64).collect();
        assert_eq!(throughput_ci(0.0, &half[..19], &[4; 19]), None);
        let steady = throughput_ci(0.0, &half, &[4; 20]).unwrap();
        assert_eq!((steady.throughput, steady.ci_rel), (8.0, 0.0));
        let ends: Vec<f64> = (1..=60).map(|i| i as f64).collect();
        let mut images = vec![6u64; 6];
        images.extend([12u64; 54]);
        let ci = throughput_ci(0.0, &ends, &images).unwrap();
        assert_eq!(ci.batches, 10);
        assert!((ci.throughput - 11.4).abs() < 1e-12);
        let s = ((5.4f64.powi(2) + 9.0 * 0.6f64.powi(2)) / 9.0).sqrt();
        assert!((ci.ci_rel - 2.262 * s / 10f64.sqrt() / 11.4).abs() < 1e-12, "{ci:?}");
        assert_eq!(throughput_ci(5.0, &[5.0; 20], &[4; 20]), None);
        assert_eq!(throughput_ci(0.0, &ends, &[0; 60]), None);
    }
}
