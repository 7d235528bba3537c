use std::process::ExitCode;
#[derive(clap::Args)]
pub struct Args {
    /// Spec files to check; none: every spec under experiments/ and artifact.yaml.
    pub files: Vec<std::path::PathBuf>,
}
pub fn main(_a: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
