//! The simulated backend (`--simulate`): every line of the runner that simulates.
//!
//! * [`gpu`]: the simulated GPU ([`SimGpu`], a [`crate::backend::Backend`]) and its settings.
//! * [`model`]: speeds and memory of each job of a workload.
//! * [`telemetry`]: GPU and process samples derived from the model and the jobs' phases.
//! * [`job`]: the simulated training job (`colloc-runner fake-job`), which speaks the real
//!   job protocol.
//! * [`faults`]: which jobs a fault injected for tests selects; the faults themselves are the
//!   simulated job's (`COLLOC_FAKE_*`) and the simulated GPU's (`--fault-wrong-mps-pipe`,
//!   `--fault-disk-full`, which need `--simulate`).

mod faults;
mod gpu;
mod job;
mod model;
mod telemetry;

pub(crate) use gpu::SimGpu;
pub use gpu::{SimForeign, SimOptions};
pub use job::main as fake_job;
