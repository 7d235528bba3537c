//! Simulated GPU and process samples for `--simulate`: plausible values derived from the
//! modelled workload ([`colloc_plan::perf`]) and the jobs' phases, with seeded noise. The
//! energy counter advances in simulated seconds (real seconds / time scale), like the
//! durations in the simulated jobs' events.

use colloc_plan::perf::{WorkloadModel, GIB};
use colloc_plan::GpuTarget;
use std::collections::HashMap;

use super::model::{power_limit_watts, Rng};
use crate::jobs::Phase;
use crate::telemetry::{Gaps, GpuRow, GpuSource, JobState, Num, ProcRow};

pub(super) struct SimSource {
    model: WorkloadModel,
    tdp: f64,
    clocks: (f64, f64),
    rng: Rng,
    energy_j: f64,
    last_mono: Option<f64>,
    time_scale: f64,
    temperature: f64,
    /// Per job: (GPU-instance id, its memory in bytes) in MIG mode.
    mig: Vec<Option<(u32, u64)>>,
    /// A foreign process: real seconds after the release when it appears, its memory.
    foreign: Option<(f64, u64)>,
    /// The first sample at which a job trained.
    release_mono: Option<f64>,
    /// NVML failing: real seconds after the release from when power and the GPM metrics
    /// cannot be read.
    nvml_errors_after: Option<f64>,
}

/// The columns the simulated driver cannot read once it fails.
const FAILING_COLUMNS: [&str; 6] =
    ["power_w", "energy_j", "sm_activity_pct", "sm_occupancy_pct", "tensor_activity_pct", "dram_bw_util_pct"];

/// What the simulated driver answers when it fails mid-run (the error of an NVML call).
pub(super) const SIM_NVML_ERROR: &str = "Unknown Error (the simulated driver fails from now on)";

/// The pid of the simulated foreign process: above the largest pid Linux gives (2^22).
pub(super) const FOREIGN_PID: u32 = (1 << 22) + 1;

impl SimSource {
    /// `mig_devices[job]` = GPU-instance id and `mig_memory[job]` its slice's memory in bytes,
    /// in MIG mode.
    pub(super) fn new(
        gpu: &GpuTarget,
        model: WorkloadModel,
        seed: u64,
        time_scale: f64,
        mig_devices: &[(u32, String)],
        mig_memory: &[Option<u64>],
    ) -> SimSource {
        let k = gpu.key.to_ascii_lowercase();
        let clocks = if k.contains("h200") {
            (1980.0, 3201.0)
        } else if k.contains("h100") {
            (1980.0, 2619.0)
        } else if k.contains("a100") {
            (1410.0, 1215.0)
        } else {
            (1500.0, 1500.0)
        };
        let mut rng = Rng::new(seed);
        let mig = mig_devices
            .iter()
            .zip(mig_memory.iter().chain(std::iter::repeat(&None)))
            .map(|((gi, _), bytes)| Some((*gi, bytes.unwrap_or(0))))
            .collect();
        SimSource {
            model,
            tdp: power_limit_watts(gpu),
            clocks,
            energy_j: rng.range(1.0e6, 5.0e7),
            rng,
            last_mono: None,
            time_scale: if time_scale > 0.0 { time_scale } else { 1.0 },
            temperature: 32.0,
            mig,
            foreign: None,
            release_mono: None,
            nvml_errors_after: None,
        }
    }

    /// With a foreign process on the GPU `after` real seconds after the release, holding
    /// `bytes` of memory.
    pub(super) fn with_foreign(mut self, foreign: Option<(f64, u64)>) -> SimSource {
        self.foreign = foreign;
        self
    }

    /// With NVML failing to read power, energy and the GPM metrics from `after` real seconds
    /// after the release on.
    pub(super) fn with_nvml_errors(mut self, after: Option<f64>) -> SimSource {
        self.nvml_errors_after = after;
        self
    }

    fn job_memory(&self, i: usize, phase: Phase) -> u64 {
        let full = self.model.jobs.get(i).map(|j| j.memory_bytes).unwrap_or(0);
        match phase {
            Phase::Setup => full / 3,
            Phase::Ready | Phase::Training => full,
            Phase::Done => 0,
        }
    }

    fn job_activity(&self, i: usize, phase: Phase) -> f64 {
        match phase {
            Phase::Training => self.model.jobs.get(i).map(|j| j.sm_activity).unwrap_or(0.0),
            Phase::Setup => 0.02,
            _ => 0.0,
        }
    }
}

fn clamp_pct(v: f64) -> f64 {
    v.clamp(0.0, 100.0)
}

impl GpuSource for SimSource {
    fn name(&self) -> &'static str {
        "simulated"
    }

    fn sample(&mut self, jobs: &[JobState], gaps: &mut Gaps, energy: bool) -> Vec<GpuRow> {
        let mono = colloc_trace::monotonic_seconds();
        let dt = self.last_mono.map(|m| (mono - m).max(0.0)).unwrap_or(0.0) / self.time_scale;
        self.last_mono = Some(mono);
        let training = jobs.iter().any(|j| j.phase == Phase::Training);
        if training && self.release_mono.is_none() {
            self.release_mono = Some(mono);
        }
        let busy = jobs.iter().any(|j| j.phase != Phase::Done);
        let activity: f64 = jobs.iter().enumerate().map(|(i, j)| self.job_activity(i, j.phase)).sum::<f64>().min(1.0);
        let mem: u64 = jobs.iter().enumerate().map(|(i, j)| self.job_memory(i, j.phase)).sum::<u64>()
            + if busy { (0.4 * GIB) as u64 } else { 0 };
        let idle_w = 0.11 * self.tdp;
        let power = if training {
            idle_w + (self.tdp - idle_w) * (0.25 + 0.7 * activity) * self.rng.jitter(0.03)
        } else if busy {
            idle_w * 1.3 * self.rng.jitter(0.05)
        } else {
            idle_w * self.rng.jitter(0.02)
        };
        let power = power.min(self.tdp);
        self.energy_j += power * dt;
        let target_temp = 30.0 + 45.0 * power / self.tdp;
        self.temperature += (target_temp - self.temperature) * 0.2;
        let gpu_util = if training {
            clamp_pct((70.0 + 60.0 * activity) * self.rng.jitter(0.02))
        } else if busy {
            clamp_pct(8.0 * self.rng.jitter(0.5))
        } else {
            0.0
        };
        let throttled = power > 0.95 * self.tdp;
        let mut row = GpuRow::new(-1);
        row.set("power_w", Num::F(power));
        if energy {
            row.set("energy_j", Num::F(self.energy_j));
        }
        row.set("gpu_util_pct", Num::U(gpu_util.round() as u64));
        row.set("mem_util_pct", Num::U(clamp_pct(55.0 * activity * self.rng.jitter(0.05)).round() as u64));
        row.set("mem_used_bytes", Num::U(mem.min(self.model.memory_total_bytes)));
        row.set("mem_total_bytes", Num::U(self.model.memory_total_bytes));
        row.set("sm_clock_mhz", Num::U(if throttled { self.clocks.0 - 150.0 } else { self.clocks.0 } as u64));
        row.set("mem_clock_mhz", Num::U(self.clocks.1 as u64));
        row.set("temperature_c", Num::U(self.temperature.round() as u64));
        // NVML clocks-event reasons: 0x1 GPU idle, 0x4 software power cap.
        row.set(
            "throttle_reasons",
            Num::U(if !training {
                0x1
            } else if throttled {
                0x4
            } else {
                0
            }),
        );
        let gpm = |row: &mut GpuRow, a: f64, rng: &mut Rng| {
            row.set("sm_activity_pct", Num::F(clamp_pct(100.0 * a * rng.jitter(0.03))));
            row.set("sm_occupancy_pct", Num::F(clamp_pct(55.0 * a * rng.jitter(0.05))));
            row.set("tensor_activity_pct", Num::F(clamp_pct(30.0 * a * rng.jitter(0.05))));
            row.set("dram_bw_util_pct", Num::F(clamp_pct(45.0 * a * rng.jitter(0.05))));
        };
        gpm(&mut row, activity, &mut self.rng);
        let failing = match (self.nvml_errors_after, self.release_mono) {
            (Some(after), Some(release)) => mono - release >= after,
            _ => false,
        };
        if failing {
            // The energy counter fails only where it is read (the sampler says why not else).
            for c in FAILING_COLUMNS.into_iter().filter(|c| energy || *c != "energy_j") {
                row.clear(c);
                gaps.miss(c, false, || SIM_NVML_ERROR.to_string());
            }
        }
        let mut rows = vec![row];
        for (i, m) in self.mig.clone().iter().enumerate() {
            let Some((gi, total)) = *m else { continue };
            let phase = jobs.get(i).map(|j| j.phase).unwrap_or(Phase::Done);
            let mut r = GpuRow::new(gi as i64);
            r.set("mem_used_bytes", Num::U(self.job_memory(i, phase).min(total)));
            r.set("mem_total_bytes", Num::U(total));
            let share = (total as f64 / self.model.memory_total_bytes.max(1) as f64).clamp(0.05, 1.0);
            gpm(&mut r, (self.job_activity(i, phase) / share).min(1.0), &mut self.rng);
            rows.push(r);
        }
        rows
    }

    /// Only the foreign process, once it has appeared (the jobs' rows are simulated).
    fn process_memory(&mut self, _gaps: &mut Gaps) -> Option<HashMap<u32, Option<u64>>> {
        let (after, bytes) = self.foreign?;
        let release = self.release_mono?;
        (colloc_trace::monotonic_seconds() - release >= after).then(|| HashMap::from([(FOREIGN_PID, Some(bytes))]))
    }

    /// The simulated samples read nothing of the host: the sampler's CPU time says nothing of
    /// a real one's.
    fn reads_the_host(&self) -> bool {
        false
    }

    fn process_name(&self, pid: u32) -> Option<String> {
        (pid == FOREIGN_PID).then(|| "simulated-foreign".to_string())
    }

    /// Simulated jobs' rows, from the model.
    fn own_process_rows(&mut self, jobs: &[JobState]) -> Option<Vec<Option<ProcRow>>> {
        let rows = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let pid = j.pid?;
                if j.phase == Phase::Done || !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                    return None;
                }
                let sim = self.model.jobs.get(i)?;
                let cpu = match j.phase {
                    Phase::Training => sim.cpu_pct * self.rng.jitter(0.05),
                    Phase::Setup => 100.0 * self.rng.jitter(0.1),
                    _ => 2.0 * self.rng.jitter(0.5),
                };
                Some(ProcRow {
                    job: i as u32,
                    pids: if j.phase == Phase::Setup { 1 } else { sim.processes },
                    cpu_pct: Some(cpu),
                    rss_bytes: Some(sim.rss_bytes),
                    gpu_mem_bytes: Some(self.job_memory(i, j.phase)),
                })
            })
            .collect();
        Some(rows)
    }
}
