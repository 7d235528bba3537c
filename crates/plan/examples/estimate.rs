//! Prints a campaign's totals: `cargo run -p colloc-plan --example estimate -- CAMPAIGN [GPU]`.
fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = colloc_spec::names::project_root()?;
    let plan = colloc_plan::plan_campaign(&root, &args[0], args.get(1).map(String::as_str))?;
    let gpu_runs = plan
        .workloads
        .iter()
        .filter(|w| w.feasible && w.mode != colloc_trace::Mode::Mig)
        .map(|w| w.repetitions as usize)
        .sum::<usize>();
    let gpu_secs: f64 = plan
        .workloads
        .iter()
        .filter(|w| w.feasible && w.mode != colloc_trace::Mode::Mig)
        .map(|w| w.estimated_seconds * w.repetitions as f64)
        .sum();
    println!("{:?}\nruns needing the GPU without MIG: {gpu_runs}, {:.0} min", plan.totals, gpu_secs / 60.0);
    Ok(())
}
