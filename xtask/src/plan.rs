use std::process::ExitCode;
#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    pub campaign: Option<String>,
    #[arg(long)]
    pub gpu: Option<String>,
    #[arg(long)]
    pub json: bool,
}
#[derive(clap::Args)]
pub struct ImportArgs {
    pub file: std::path::PathBuf,
}
pub fn main(_a: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
pub fn import_main(_a: ImportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
