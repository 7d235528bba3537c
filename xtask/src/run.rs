//! `cargo xtask run`: plans a campaign and hands it to the runner.
use std::process::ExitCode;
#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    pub campaign: String,
}
pub fn main(_a: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`cargo xtask run` is not implemented yet")
}
