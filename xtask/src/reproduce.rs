//! `cargo xtask reproduce`: verify, analyse, regenerate, print the claims.
use std::process::ExitCode;
#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    pub campaign: Option<String>,
}
pub fn main(_a: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`cargo xtask reproduce` is not implemented yet")
}
