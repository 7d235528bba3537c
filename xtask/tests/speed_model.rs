//! The speed model's fit to the H200 (`experiments/gpus/h200-141gb.yaml` →
//! `estimate_profiles`, and `colloc_plan::perf::NAIVE_CAPACITY`) against the shipped `h200`
//! campaign: on synthetic data, where the loaders do not set the pace, each exp-33 workload's
//! modelled aggregate ratio (STP) is within 15% of the measured one. The model only estimates
//! GPU time and drives the simulated backend; this keeps those close to what the H200 does.

use std::path::Path;

#[test]
fn the_h200_speed_fit_is_within_15_percent_of_the_shipped_ratios_on_synthetic_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let plan = colloc_plan::plan_campaign(&root, "h200", None).expect("h200 plans");
    let results = colloc_analysis::analyse(&root.join("data/h200"), Some(&plan)).expect("h200 analyses");
    let mut compared = 0;
    let mut off = Vec::new();
    for w in plan.workloads.iter().filter(|w| w.experiment == 33 && w.data == "synthetic") {
        let Some(measured) = results.workload(&w.id).and_then(|r| r.stats.aggregate_ratio).map(|s| s.median) else {
            continue;
        };
        let m = colloc_plan::perf::model_workload(&plan.gpu, w);
        let modelled: f64 = w
            .jobs
            .iter()
            .zip(&m.jobs)
            .map(|(j, jm)| {
                jm.images_per_second / colloc_plan::perf::alone_images_per_second(&plan.gpu, &j.model, j.batch_size)
            })
            .sum();
        let rel = modelled / measured - 1.0;
        eprintln!("{:48} measured {measured:.2} modelled {modelled:.2} ({:+.1}%)", w.id, 100.0 * rel);
        compared += 1;
        if rel.abs() > 0.15 {
            off.push(format!("{}: measured {measured:.2}, modelled {modelled:.2}", w.id));
        }
    }
    assert!(compared >= 30, "only {compared} workloads compared");
    assert!(off.is_empty(), "more than 15% off:\n  {}", off.join("\n  "));
}
