//! What the simulation adds to the speed and memory model it shares with the plan
//! ([`colloc_plan::perf`]: each job's images/s, data wait, memory, out of memory): the
//! board's power limit for the telemetry, and seeded noise.

use colloc_plan::GpuTarget;

/// Board power limit of the simulated GPU: the GPU table's (300 W for a plan without one).
pub(super) fn power_limit_watts(gpu: &GpuTarget) -> f64 {
    if gpu.power_limit_watts > 0.0 {
        gpu.power_limit_watts
    } else {
        300.0
    }
}

/// A small deterministic random number generator (SplitMix64).
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// A seed from a base seed and a name (a run id, a job index).
    pub(super) fn derive(seed: u64, name: &str) -> Rng {
        let mut h = seed ^ 0xCBF2_9CE4_8422_2325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x1000_0000_01B3);
        }
        Rng::new(h)
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub(super) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(super) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// `1 ± spread` (uniform).
    pub(super) fn jitter(&mut self, spread: f64) -> f64 {
        1.0 + spread * (2.0 * self.unit() - 1.0)
    }
}
