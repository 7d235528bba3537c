//! The 95% intervals of a workload's ratios: a bootstrap over what the ratios rest on. Each
//! resample draws the workload's repetitions with replacement; for each drawn run, each
//! job's baseline anew: where the spread of runs alone beside each other is known
//! ([`crate::model::JobRun::baseline_spread`]), as many runs as the ratio divides by drawn
//! around their median with that spread (log-normal) and their median taken (a parametric
//! bootstrap: one to three runs alone cannot show their own spread); else those runs drawn
//! with replacement, each moved within its own window's 95% interval. A baseline is drawn
//! once per resample, shared by every run and job that divides by the same runs alone
//! (repetitions made beside them share their error). Each job's throughput moves within
//! its own window's 95% interval (normal, that interval's half-width over 1.96 its standard
//! deviation). The statistic of a resample is the median over its drawn repetitions, as the
//! tables report the median; the interval is its 2.5th to 97.5th percentile. Deterministic:
//! the generator is seeded by the workload's id.

use crate::model::{RatioIntervals, RunResult};
use std::collections::BTreeMap;

/// Resamples per workload.
pub(crate) const RESAMPLES: u32 = 2000;

/// splitmix64: small, fast and good enough for resampling; seeded per workload so that the
/// same traces give the same intervals.
struct Rng(u64);

impl Rng {
    fn seeded(text: &str) -> Rng {
        // FNV-1a of the text.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn index(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(f64::MIN_POSITIVE);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// `x` moved within its 95% interval of relative half-width `ci_rel`.
    fn jitter(&mut self, x: f64, ci_rel: Option<f64>) -> f64 {
        match ci_rel.filter(|c| c.is_finite() && *c > 0.0) {
            Some(c) => x * (1.0 + c / 1.96 * self.normal()).max(0.05),
            None => x,
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The 2.5th and 97.5th percentiles (linear between order statistics).
fn percentiles(v: &mut [f64]) -> [f64; 2] {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let x = q * (v.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    [at(0.025), at(0.975)]
}

/// One resampled run: its STP, ANTT, fairness and aggregate throughput; `None` when a job
/// has no ratio.
fn resample_run(r: &RunResult, rng: &mut Rng, drawn_alone: &mut BTreeMap<String, f64>) -> Option<[f64; 4]> {
    let mut normalised = Vec::with_capacity(r.jobs.len());
    let mut aggregate = 0.0;
    for j in &r.jobs {
        let t = j.throughput.filter(|t| *t > 0.0)?;
        if j.baseline_runs.is_empty() {
            return None;
        }
        // A smoothed bootstrap: each drawn run alone moves as one run strays from another
        // beside it (the pooled spread), or at least within its own window's interval.
        let base = match j.baseline_spread {
            // Runs alone whose spread beside each other is known: as many new ones drawn
            // around their median with that spread (a parametric bootstrap), the same draw
            // for every run and job that divides by the same runs alone in this resample
            // (repetitions made beside them share their error).
            Some(sd) => {
                let key = j.baseline_runs.iter().map(|b| b.run_id.as_str()).collect::<Vec<_>>().join(" ");
                match drawn_alone.get(&key) {
                    Some(v) => *v,
                    None => {
                        let mut obs: Vec<f64> = j.baseline_runs.iter().map(|b| b.throughput).collect();
                        let center = median(&mut obs);
                        let mut drawn: Vec<f64> = (0..obs.len()).map(|_| center * (sd * rng.normal()).exp()).collect();
                        let v = median(&mut drawn);
                        drawn_alone.insert(key, v);
                        v
                    }
                }
            }
            // Else the runs alone drawn again with replacement, each moved within its own
            // window's interval, once per resample.
            None => {
                let mut drawn: Vec<f64> = Vec::with_capacity(j.baseline_runs.len());
                for _ in 0..j.baseline_runs.len() {
                    let b = &j.baseline_runs[rng.index(j.baseline_runs.len())];
                    let v = match drawn_alone.get(b.run_id.as_str()) {
                        Some(v) => *v,
                        None => {
                            let v = rng.jitter(b.throughput, b.ci_rel);
                            drawn_alone.insert(b.run_id.clone(), v);
                            v
                        }
                    };
                    drawn.push(v);
                }
                median(&mut drawn)
            }
        };
        let t = rng.jitter(t, j.throughput_ci.map(|c| c.relative_half_width));
        aggregate += t;
        normalised.push(t / base);
    }
    if normalised.is_empty() {
        return None;
    }
    let stp: f64 = normalised.iter().sum();
    let antt = normalised.iter().map(|x| 1.0 / x).sum::<f64>() / normalised.len() as f64;
    let lo = normalised.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = normalised.iter().copied().fold(0.0, f64::max);
    Some([stp, antt, lo / hi, aggregate])
}

/// The intervals of a workload from its counted runs; `None` when no run has a ratio.
pub(crate) fn of_workload(id: &str, runs: &[&RunResult]) -> Option<RatioIntervals> {
    let usable: Vec<&RunResult> = runs
        .iter()
        .copied()
        .filter(|r| r.aggregate_ratio.is_some() && r.jobs.iter().all(|j| !j.baseline_runs.is_empty()))
        .collect();
    if usable.is_empty() {
        return None;
    }
    let mut rng = Rng::seeded(id);
    let mut out: [Vec<f64>; 4] = Default::default();
    for _ in 0..RESAMPLES {
        let mut per_run: [Vec<f64>; 4] = Default::default();
        let mut drawn_alone: BTreeMap<String, f64> = BTreeMap::new();
        for _ in 0..usable.len() {
            let r = usable[rng.index(usable.len())];
            if let Some(v) = resample_run(r, &mut rng, &mut drawn_alone) {
                for k in 0..4 {
                    per_run[k].push(v[k]);
                }
            }
        }
        if per_run[0].is_empty() {
            continue;
        }
        for k in 0..4 {
            let m = median(&mut per_run[k]);
            out[k].push(m);
        }
    }
    if out[0].is_empty() {
        return None;
    }
    // Fairness is the lowest of the jobs' normalised throughputs over the highest: moving
    // each within its window interval lowers it on average (the extremes of noisy values
    // spread), so its resamples lie below the value. Its interval is shifted by that bias
    // (the resamples' median less the value), and fairness is at most 1.
    let point = median(&mut usable.iter().filter_map(|r| crate::model::fairness(r)).collect::<Vec<f64>>());
    let bias = median(&mut out[2].clone()) - point;
    let [stp, antt, fairness, aggregate] = out.map(|mut v| percentiles(&mut v));
    let fairness = [(fairness[0] - bias).clamp(0.0, 1.0), (fairness[1] - bias).clamp(0.0, 1.0)];
    Some(RatioIntervals { stp, antt, fairness, aggregate_throughput: aggregate, resamples: RESAMPLES })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_roughly_uniform_and_normal() {
        let (mut a, mut b) = (Rng::seeded("w"), Rng::seeded("w"));
        let xs: Vec<f64> = (0..20000).map(|_| a.unit()).collect();
        assert!((0..20000).all(|i| b.unit() == xs[i]));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        let zs: Vec<f64> = (0..20000).map(|_| a.normal()).collect();
        let m = zs.iter().sum::<f64>() / zs.len() as f64;
        let var = zs.iter().map(|z| (z - m) * (z - m)).sum::<f64>() / zs.len() as f64;
        assert!(m.abs() < 0.03 && (var - 1.0).abs() < 0.05, "mean {m}, variance {var}");
    }

    #[test]
    fn percentiles_of_a_known_sample() {
        let mut v: Vec<f64> = (0..=1000).map(|i| i as f64).collect();
        assert_eq!(percentiles(&mut v), [25.0, 975.0]);
    }
}
