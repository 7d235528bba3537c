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

/// A job of a usable run as the resamples need it, its baseline's keys found once.
struct JobDraw {
    throughput: f64,
    ci_rel: Option<f64>,
    baseline: BaselineDraw,
}

/// How a job's baseline is drawn in a resample (see [`resample_run`]).
enum BaselineDraw {
    /// Runs alone whose spread is known: drawn around their median `center`, `count` of
    /// them, the draw kept under `key` for the resample.
    Spread { key: usize, center: f64, sd: f64, count: usize },
    /// The runs alone drawn with replacement: each one's key, throughput and relative
    /// interval.
    Runs(Vec<(usize, f64, Option<f64>)>),
}

/// A usable run: its jobs up to the first without a ratio, and whether every job has one
/// (else the run gives no resample, once the jobs before that one have drawn theirs).
struct RunDraw {
    jobs: Vec<JobDraw>,
    complete: bool,
}

/// The draws of a resample shared by every run and job that divides by the same runs alone:
/// one slot per key (a run alone's id, or the ids of the runs alone a median is drawn for,
/// joined by spaces; both kinds share one table, as a key is the same text either way).
struct Keys(Vec<String>);

impl Keys {
    fn of(&mut self, key: String) -> usize {
        match self.0.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                self.0.push(key);
                self.0.len() - 1
            }
        }
    }
}

impl RunDraw {
    fn of(r: &RunResult, keys: &mut Keys) -> RunDraw {
        let mut jobs = Vec::with_capacity(r.jobs.len());
        for j in &r.jobs {
            let Some(t) = j.throughput.filter(|t| *t > 0.0) else { return RunDraw { jobs, complete: false } };
            if j.baseline_runs.is_empty() {
                return RunDraw { jobs, complete: false };
            }
            let baseline = match j.baseline_spread {
                Some(sd) => {
                    let key = j.baseline_runs.iter().map(|b| b.run_id.as_str()).collect::<Vec<_>>().join(" ");
                    let mut obs: Vec<f64> = j.baseline_runs.iter().map(|b| b.throughput).collect();
                    BaselineDraw::Spread { key: keys.of(key), center: median(&mut obs), sd, count: obs.len() }
                }
                None => BaselineDraw::Runs(
                    j.baseline_runs.iter().map(|b| (keys.of(b.run_id.clone()), b.throughput, b.ci_rel)).collect(),
                ),
            };
            jobs.push(JobDraw { throughput: t, ci_rel: j.throughput_ci.map(|c| c.relative_half_width), baseline });
        }
        RunDraw { jobs, complete: true }
    }
}

/// One resampled run: its STP, ANTT, fairness and aggregate throughput; `None` when a job
/// has no ratio. `drawn` holds this resample's draw of each baseline key drawn so far.
fn resample_run(r: &RunDraw, rng: &mut Rng, drawn: &mut [Option<f64>], scratch: &mut Vec<f64>) -> Option<[f64; 4]> {
    let jobs = &r.jobs;
    let (mut stp, mut inverse, mut lo, mut hi, mut aggregate) = (0.0, 0.0, f64::INFINITY, 0.0_f64, 0.0);
    for j in jobs {
        // A smoothed bootstrap: each drawn run alone moves as one run strays from another
        // beside it (the pooled spread), or at least within its own window's interval.
        let base = match &j.baseline {
            // Runs alone whose spread beside each other is known: as many new ones drawn
            // around their median with that spread (a parametric bootstrap), the same draw
            // for every run and job that divides by the same runs alone in this resample
            // (repetitions made beside them share their error).
            BaselineDraw::Spread { key, center, sd, count } => match drawn[*key] {
                Some(v) => v,
                None => {
                    scratch.clear();
                    scratch.extend((0..*count).map(|_| center * (sd * rng.normal()).exp()));
                    let v = median(scratch);
                    drawn[*key] = Some(v);
                    v
                }
            },
            // Else the runs alone drawn again with replacement, each moved within its own
            // window's interval, once per resample.
            BaselineDraw::Runs(runs) => {
                scratch.clear();
                for _ in 0..runs.len() {
                    let (key, throughput, ci_rel) = runs[rng.index(runs.len())];
                    let v = match drawn[key] {
                        Some(v) => v,
                        None => {
                            let v = rng.jitter(throughput, ci_rel);
                            drawn[key] = Some(v);
                            v
                        }
                    };
                    scratch.push(v);
                }
                median(scratch)
            }
        };
        let t = rng.jitter(j.throughput, j.ci_rel);
        aggregate += t;
        let x = t / base;
        stp += x;
        inverse += 1.0 / x;
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if !r.complete || jobs.is_empty() {
        return None;
    }
    Some([stp, inverse / jobs.len() as f64, lo / hi, aggregate])
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
    let mut keys = Keys(Vec::new());
    let draws: Vec<RunDraw> = usable.iter().map(|r| RunDraw::of(r, &mut keys)).collect();
    let mut drawn: Vec<Option<f64>> = vec![None; keys.0.len()];
    let mut scratch = Vec::new();
    let mut rng = Rng::seeded(id);
    let mut out: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(RESAMPLES as usize));
    let mut per_run: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(usable.len()));
    for _ in 0..RESAMPLES {
        per_run.iter_mut().for_each(Vec::clear);
        drawn.fill(None);
        for _ in 0..draws.len() {
            let r = &draws[rng.index(draws.len())];
            if let Some(v) = resample_run(r, &mut rng, &mut drawn, &mut scratch) {
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
