//! Writes a campaign's plan as JSON without building the analysis:
//! `cargo run -p colloc-plan --example plan_json -- CAMPAIGN [GPU] > plan.json`.
fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = colloc_spec::names::project_root()?;
    let plan = colloc_plan::plan_campaign(&root, &args[0], args.get(1).map(String::as_str))?;
    println!("{}", serde_json::to_string_pretty(&plan)?);
    Ok(())
}
